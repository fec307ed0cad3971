//! A `VertexAnimation`'s baked data as one value (for undo and redo of an editor bake), and what
//! the inspector asks before a bake: the source's clips and the estimated texture size.

use godot::classes::{ArrayMesh, Image, ImageTexture, Texture2DArray};
use godot::prelude::*;
use vat_core::bake::VatLayout;

use super::steps::BakeSource;
use super::VertexAnimation;
use crate::bake::scene;

/// Declares `BakedState` with one field per baked field of `VertexAnimation` (same names), and
/// the conversions between the two and a Dictionary.
macro_rules! baked_state {
    ($($field:ident: $ty:ty),* $(,)?) => {
        /// Every baked field of a `VertexAnimation`, and the bake's stats.
        #[derive(Default)]
        pub(crate) struct BakedState {
            $(pub $field: $ty,)*
        }

        /// The Dictionary keys of `get_baked_state`, in order.
        const KEYS: &[&str] = &[$(stringify!($field)),*];

        impl BakedState {
            fn to_dictionary(&self) -> VarDictionary {
                let mut d = VarDictionary::new();
                $(d.set(stringify!($field), &self.$field.to_variant());)*
                d
            }

            fn from_dictionary(d: &VarDictionary) -> Result<Self, String> {
                Ok(Self { $($field: entry(d, stringify!($field))?,)* })
            }
        }

        impl VertexAnimation {
            pub(super) fn take_state(&self) -> BakedState {
                BakedState { $($field: self.$field.clone(),)* }
            }

            pub(super) fn put_state(&mut self, state: BakedState) {
                $(self.$field = state.$field;)*
                self.generation += 1;
            }
        }
    };
}

baked_state! {
    mesh: Option<Gd<ArrayMesh>>,
    lod_meshes: Array<Gd<ArrayMesh>>,
    position_texture: Option<Gd<ImageTexture>>,
    normal_texture: Option<Gd<ImageTexture>>,
    tangent_texture: Option<Gd<ImageTexture>>,
    clip_texture: Option<Gd<ImageTexture>>,
    baked_storage: i32,
    bone_texture: Option<Gd<ImageTexture>>,
    skin_texture: Option<Gd<ImageTexture>>,
    bone_count: i32,
    bone_influences: i32,
    bone_directions: i32,
    variations: Option<Gd<Texture2DArray>>,
    variation_layers: Array<Gd<Image>>,
    vertex_count: i32,
    frame_count: i32,
    bounds: Aabb,
    clip_names: PackedStringArray,
    clip_table: PackedFloat32Array,
    clip_bounds_table: PackedFloat32Array,
    encoding_offset: Vector3,
    encoding_scale: Vector3,
    baked_precision: i32,
    clip_root_velocities: PackedVector3Array,
    column_channel: i32,
    source_stamp: GString,
    stats: VarDictionary,
}

/// The entry `key` of `d` as a `T`, or what is wrong with it.
fn entry<T: FromGodot>(d: &VarDictionary, key: &str) -> Result<T, String> {
    let value = d.get(key).ok_or_else(|| format!("it has no key '{key}'"))?;
    value.try_to::<T>().map_err(|_| {
        format!(
            "its '{key}' is a {:?}, not what `get_baked_state` gives there",
            value.get_type()
        )
    })
}

#[godot_api(secondary)]
impl VertexAnimation {
    /// Every baked field (mesh, lod_meshes, the textures, counts, bounds, clip tables, encoding,
    /// column_channel) and the bake's stats, as one Dictionary: what `set_baked_state` puts back.
    /// The values are the resource's own objects, not copies (a bake replaces them, it never
    /// changes them). The editor's undo of a bake is built on this pair.
    #[func]
    pub fn get_baked_state(&self) -> VarDictionary {
        self.take_state().to_dictionary()
    }

    /// Replaces every baked field with those of `state` (from `get_baked_state`, of this or another
    /// resource), all at once, and emits `changed`. A Dictionary that lacks a key or holds a value
    /// of the wrong type changes nothing and prints one error naming the key.
    #[func]
    pub fn set_baked_state(&mut self, state: VarDictionary) {
        match BakedState::from_dictionary(&state) {
            Ok(s) => {
                self.put_state(s);
                self.cache = None;
                self.reported.borrow_mut().clear();
                self.base_mut().emit_changed();
            }
            Err(why) => godot_error!(
                "vat_crowd: set_baked_state on '{}' changed nothing: the state Dictionary is not one from get_baked_state: {why} (expected keys: {})",
                self.name_for_messages(),
                KEYS.join(", ")
            ),
        }
    }

    /// The clips the AnimationPlayer of `source_scene` (at `animation_player`, else the first one)
    /// has, RESET left out, in its order: the names `clips` may list. Empty when there is no
    /// source scene or it has no such AnimationPlayer (nothing is printed: the inspector asks).
    #[func]
    pub fn get_source_clip_names(&self) -> PackedStringArray {
        let Some(root) = self.source().and_then(|s| s.instantiate()) else {
            return PackedStringArray::new();
        };
        let player = if self.animation_player.is_empty() {
            scene::find_player(&root)
        } else {
            root.get_node_or_null(&self.animation_player)
                .and_then(|n| n.try_cast().ok())
        };
        let names = player
            .map(|p: Gd<godot::classes::AnimationPlayer>| {
                p.get_animation_list()
                    .as_slice()
                    .iter()
                    .filter(|s| {
                        let s = s.to_string();
                        s != "RESET" && !s.ends_with("/RESET")
                    })
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        root.free();
        names
    }

    /// What a bake with the current settings would make, before baking: `vertices` (VAT columns
    /// without LOD), `frames`, `clips`, `bytes`, the vertex storage's texture bytes without LOD
    /// (exactly the stats' `vat_bytes_before` of that bake; with `lod_enabled` the bake's textures
    /// hold only the columns its levels use, so they are at most this), and `bone_bytes`, the bone
    /// storage's texture bytes without LOD (one transform per skin bind a vertex uses, binds of one
    /// skeleton bone shared, and one per rigid mesh: an upper bound, since only sampling
    /// finds transforms that move alike, such as meshes under one bone attachment). `storage` Auto picks bones where `bone_bytes`
    /// is at most a quarter of `bytes` and no blend shape animates. It instantiates `source_scene` in
    /// the running tree like a bake. When the settings cannot bake, the Dictionary holds only
    /// `error`, the text `bake()` would print.
    #[func]
    pub fn estimate_bake(&self) -> VarDictionary {
        let mut d = VarDictionary::new();
        let estimate = self.precision_setting().and_then(|precision| {
            let plan = self.plan(BakeSource::Scene)?;
            let vertices = plan.character.vertex_count();
            let frames = vat_core::clip::total_frames(&plan.clips);
            let layout = VatLayout::new(vertices as u32, frames)
                .map_err(|e| format!("{e} (in '{}')", plan.scene_name))?;
            let normals = bakes_normals(self.bake_normals, &plan.character);
            let mut per_texel = vat_core::bake::bytes_per_vertex_frame(precision, normals);
            if bakes_tangents(self.bake_normals, &plan.character) {
                per_texel += vat_core::bake::NORMAL_TEXEL_BYTES;
            }
            let (palette, influences) = crate::bake::bones::estimate_palette(&plan.character);
            let bone_bytes = vat_core::bones::texture_bytes(
                precision,
                palette,
                frames as usize,
                vertices,
                influences,
            )
            .map_err(|e| e.to_string())?;
            Ok((
                vertices,
                frames,
                plan.clips.len(),
                layout.texel_count() * per_texel,
                bone_bytes,
            ))
        });
        match estimate {
            Ok((vertices, frames, clips, bytes, bone_bytes)) => {
                d.set("vertices", vertices as i64);
                d.set("frames", i64::from(frames));
                d.set("clips", clips as i64);
                d.set("bytes", bytes as i64);
                d.set("bone_bytes", bone_bytes as i64);
            }
            Err(e) => d.set("error", e.as_str()),
        }
        d
    }
}

/// Whether a bake of `character` stores normals: `bake_normals`, unless no mesh has normals
/// ([`crate::bake::collect::Character::has_normals`]).
pub(crate) fn bakes_normals(
    bake_normals: bool,
    character: &crate::bake::collect::Character,
) -> bool {
    bake_normals && character.has_normals()
}

/// Whether a bake of `character` stores tangents: with normals, where a material uses a normal
/// map (only then does a shader read them).
pub(crate) fn bakes_tangents(
    bake_normals: bool,
    character: &crate::bake::collect::Character,
) -> bool {
    bakes_normals(bake_normals, character) && character.uses_normal_map()
}
