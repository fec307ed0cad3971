//! `VertexAnimation`: a character to bake (source and settings) and what was baked from it.

pub(crate) mod bake_job;
mod bone_storage;
mod clips;
mod decode;
#[cfg(feature = "dev")]
mod dev;
mod entry;
mod lod;
mod source;
mod state;
pub(crate) mod steps;
mod warnings;

use godot::classes::{
    ArrayMesh, IResource, Image, ImageTexture, PackedScene, Resource, Texture2D, Texture2DArray,
};
use godot::global::Error;
use godot::prelude::*;
use vat_core::bake::EncodedVat;

use crate::bake::output;

mod clip_specs;
mod stored;

/// Floats per clip in the stored clip table: first frame, frame count, fps, duration, looped.
const CLIP_STRIDE: usize = 5;
/// Clips this short are Godot's clamped "zero length" (Animation's minimum is 0.001 s).
const MIN_CLIP_LENGTH: f32 = 0.0011;
/// `root_motion` value that removes the root's horizontal drift.
const ROOT_MOTION_IN_PLACE: i32 = 1;
use crate::bake::bones::{STORAGE_AUTO, STORAGE_BONES, STORAGE_VERTICES};

/// A character baked into vertex animation textures.
///
/// Set `source_scene` (an imported .glb/.gltf or a .tscn with a Skeleton3D, an AnimationPlayer and
/// MeshInstance3Ds), optionally pick `meshes` and `clips`, then press **Bake** in the inspector (or
/// call `bake()`, or run `addons/vat_crowd/bake.gd`). The baked mesh, textures and clip table are
/// stored inside this resource; save it as a binary `.res`.
#[derive(GodotClass)]
#[class(tool, init, base = Resource)]
pub struct VertexAnimation {
    // First and in no group: the first thing the inspector shows, never folded into a group.
    /// Bakes `source_scene` now and saves this resource if it has a file. With the vat_crowd
    /// plugin enabled the inspector shows its own Bake panel at the top instead (the bake in steps,
    /// with progress, Cancel and undo); this button, for projects without the plugin, bakes in one
    /// go.
    #[export_tool_button(fn = Self::bake_from_inspector, name = "Bake", icon = "Bake")]
    bake_button: PhantomVar<Callable>,
    /// The character scene to bake from. A bake keeps its file's path, uid and md5, never a
    /// dependency on it: a baked resource loads and plays where the source was moved or deleted
    /// (the inspector then warns). A scene without a file of its own is saved inside the resource.
    #[export]
    #[export_group(name = "Source")]
    #[var(get = get_source_scene, set = set_source_scene)]
    source_scene: PhantomVar<Option<Gd<PackedScene>>>,
    /// Path of the AnimationPlayer inside `source_scene`; empty means the first one found.
    #[export]
    animation_player: NodePath,
    /// MeshInstance3D paths inside `source_scene` to bake (e.g. only the sword, to bake it as its own
    /// model from the same skeleton and clips); empty means every visible MeshInstance3D.
    #[export]
    meshes: Array<NodePath>,
    /// Clip names to bake, in this order; empty means every animation except RESET.
    #[export]
    clips: PackedStringArray,
    /// Frames per second at which clips are sampled.
    #[export(range = (1.0, 240.0, or_greater))]
    #[init(val = 30.0)]
    fps: f64,
    /// Per-clip sampling rate overrides: `{ "clip name": fps }`.
    #[export]
    clip_fps: VarDictionary,
    /// Position precision: Half (8 bytes per vertex-frame, positions relative to the bounds, error at
    /// most 2^-12 of the extent per axis) or Float (16 bytes, exact).
    /// In bone storage the same goes for the bone transforms (see docs/formats.md).
    #[export(enum = (Half = 0, Float = 1))]
    precision: i32,
    /// How the animation is stored. Vertices: every vertex's position (and normal) per frame, the
    /// classic VAT; plays anything, blend shapes included, but grows with vertices x frames.
    /// Bones: one transform per bone per frame, skinned in the vertex shader; grows with bones x
    /// frames (often 20-100x smaller), refused for animated blend shapes. Auto (the default):
    /// Bones where that is at least 4x smaller and the character has no animated blend shapes,
    /// else Vertices; the bake summary says which and why.
    // Custom accessors: a generated setter's parameter would be called `storage`, the name gdext's
    // generated call code gives the instance storage.
    #[export(enum = (Vertices = 0, Bones = 1, Auto = 2))]
    #[var(get = get_storage, set = set_storage)]
    #[init(val = STORAGE_AUTO)]
    storage: i32,
    /// Bone storage for equipment: the body this model is worn by (baked from the same scene and
    /// clips in bone storage). This model then stores no bone texture of its own and draws with
    /// the body's: a sword under a BoneAttachment3D follows the body's bone at its grip, armour
    /// skinned to the same skeleton its bones. A bake that cannot (a mesh moving unlike any of the
    /// body's bones, other clips) fails and says why. Null: a bone texture of its own. Set here,
    /// at bake time, because a loaded bone texture takes video memory whether drawn or not.
    #[export]
    #[var(get = get_bone_source, set = set_bone_source)]
    bone_source: Option<Gd<VertexAnimation>>,
    /// Also bake normals (octahedral, 4 bytes per vertex-frame) so lighting follows the animation.
    #[export]
    #[init(val = true)]
    bake_normals: bool,
    /// Textures selectable per instance (e.g. team colours). Packed into one Texture2DArray with
    /// mipmaps; each is converted to the first one's size and to RGBA8. Like `source_scene`, kept
    /// by file (path and uid), never as a load dependency: the baked array plays without them.
    #[export]
    #[var(get = get_texture_variations, set = set_texture_variations)]
    texture_variations: PhantomVar<Array<Option<Gd<Texture2D>>>>,
    /// Root motion of walk and run clips: Keep bakes the root bone's travel as the source has it;
    /// In Place takes its horizontal drift over each clip out (its sway and vertical bob stay), so
    /// game code moves the actors, for example at `get_clip_root_velocity(clip)`.
    #[export(enum = (Keep = 0, InPlace = 1))]
    root_motion: i32,
    /// The root bone for root motion. Empty: the AnimationPlayer's `root_motion_track` when it
    /// names a bone, else the first bone that a baked clip carries across the floor.
    #[export]
    root_motion_bone: StringName,
    /// Where crowd LOD1 and LOD2 start, in metres, for an actor at scale 1 seen with a 30 degree
    /// vertical field of view (any image height); later levels follow the same curve. Larger
    /// actors switch proportionally farther, narrower views farther too
    /// (`get_lod_switch_distances`).
    #[export]
    #[export_subgroup(name = "LOD")]
    #[init(val = PackedFloat32Array::from(&vat_core::lod_distance::DEFAULT_SWITCH_DISTANCES))]
    pub(crate) lod_distances: PackedFloat32Array,
    /// Build LOD meshes when baking: LOD0 the source welded, LOD1 LOD0 simplified, LOD2 a small
    /// closed remesh; all read one VAT holding only the columns they use. Off: `mesh` is the
    /// source as it is and the VAT has one column per source vertex.
    #[export]
    #[init(val = true)]
    pub(crate) lod_enabled: bool,
    /// LOD1's share of LOD0's triangles (the head keeps more).
    #[export(range = (0.05, 1.0, 0.01))]
    #[init(val = 0.52)]
    pub(crate) lod1_ratio: f32,
    /// The bone whose region gets LOD1's larger head budget; empty: the first bone whose name
    /// contains "head" (any case).
    #[export]
    pub(crate) lod_head_bone: GString,
    /// LOD2's triangle target (must be below the source's triangle count). When no LOD2 this
    /// coarse passes the hole check, the bake aims at twice and then four times it (at most half
    /// of LOD1's triangles) and says so in the stats' `lod_notes`.
    #[export(range = (1.0, 5000.0, 1.0, or_greater))]
    #[init(val = 300)]
    pub(crate) lod2_triangles: i32,
    /// Voxel size of LOD2's remesh, in the character's units; 0: chosen from the character's size.
    #[export(range = (0.0, 1.0, 0.001, or_greater))]
    pub(crate) lod_voxel_size: f32,
    /// Baked: the combined render mesh (all baked MeshInstance3Ds, surfaces and materials kept;
    /// each vertex's VAT column in the custom channel `column_channel`).
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    #[export_group(name = "Baked")]
    mesh: Option<Gd<ArrayMesh>>,
    /// Baked: vertex positions of every frame (RGBAH or RGBAF, linear layout).
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    position_texture: Option<Gd<ImageTexture>>,
    /// Baked: octahedral normals of every frame (RGH), same layout as `position_texture`.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    normal_texture: Option<Gd<ImageTexture>>,
    /// Baked: octahedral tangents of every frame (RGH), same layout as `normal_texture`; only
    /// where a source material uses a normal map (null otherwise). The bitangent sign is the
    /// mesh's TANGENT w.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    tangent_texture: Option<Gd<ImageTexture>>,
    /// Baked: the storage the bake used (0 vertices, 1 bones; `storage` Auto picks one).
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    baked_storage: i32,
    /// Baked, bone storage: three rows of an affine transform per bone per frame (RGBAH or
    /// RGBAF, linear layout; see docs/formats.md). Null in vertex storage.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    bone_texture: Option<Gd<ImageTexture>>,
    /// Baked, bone storage: per VAT column its rest position, rest normal and tangent, bones and
    /// weights (RGBAF). Null in vertex storage.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    skin_texture: Option<Gd<ImageTexture>>,
    /// Baked, bone storage: transforms per frame in `bone_texture` (skin binds and node
    /// transforms, equal ones shared). 0 in vertex storage.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    bone_count: i32,
    /// Baked, bone storage: influences per column in `skin_texture` (4 or 8).
    #[var(get = _get_bone_influences, set = _set_bone_influences, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    bone_influences: i32,
    /// Baked, bone storage: which skinned directions the shader uses, bit 0 normals (the source
    /// has normals and `bake_normals` is on), bit 1 tangents (a material uses a normal map).
    #[var(get = _get_bone_directions, set = _set_bone_directions, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    bone_directions: i32,
    /// Baked: the clip table for the shader, one RGBAF texel per clip.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    clip_texture: Option<Gd<ImageTexture>>,
    /// Baked: `texture_variations` as one Texture2DArray. Saved as `variation_layers`.
    #[var(pub, usage_flags = [EDITOR, READ_ONLY])]
    variations: Option<Gd<Texture2DArray>>,
    /// Saved: the layers of `variations`, from which it is built again on load. A
    /// Texture2DArray saved by itself loses its layers where the renderer keeps no copy of them
    /// (`--headless`, as `bake.gd` and `cargo xtask bake` run), so the resource keeps them.
    #[var(get = _get_variation_layers, set = _set_variation_layers, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    variation_layers: Array<Gd<Image>>,
    /// Baked: VAT columns: one per vertex position some level of detail draws (with LODs, welded
    /// vertices share one and LOD2 adds bound ones; without, one per source vertex).
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    vertex_count: i32,
    /// Baked: frames over all clips.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    frame_count: i32,
    /// Baked: bounds of every vertex over every frame, in the character root's space.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    bounds: Aabb,
    /// Baked: clip names, in table order.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    clip_names: PackedStringArray,
    // `encoding_offset` and `encoding_scale` are API but raw numbers: stored, not in the
    // inspector. The `INTERNAL` fields below are saved (STORAGE) but are no API: no EDITOR flag keeps
    // them out of the inspector, INTERNAL out of the class reference (F1), which Godot builds
    // from the registered properties and skips INTERNAL ones in (`DocTools::generate`). Their
    // accessors start with `_`, which keeps them out of F1's method list too.
    /// Baked: per clip first frame, frame count, fps, duration (s), looped (1/0).
    #[var(get = _get_clip_table, set = _set_clip_table, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    clip_table: PackedFloat32Array,
    /// Baked: per clip bounds as min xyz, max xyz.
    #[var(get = _get_clip_bounds_table, set = _set_clip_bounds_table, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    clip_bounds_table: PackedFloat32Array,
    /// Baked: decoded position = encoding_offset + stored * encoding_scale.
    #[var(pub, usage_flags = [STORAGE, READ_ONLY])]
    encoding_offset: Vector3,
    /// Baked: see `encoding_offset`.
    #[var(pub, usage_flags = [STORAGE, READ_ONLY])]
    #[init(val = Vector3::ONE)]
    encoding_scale: Vector3,
    /// Baked: precision the textures were written with (0 half, 1 float).
    #[var(get = _get_baked_precision, set = _set_baked_precision, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    baked_precision: i32,
    /// Baked: per clip, the average velocity of the root bone (units per second, character root
    /// space, measured before any in-place removal); see `get_clip_root_velocity`.
    #[var(get = _get_clip_root_velocities, set = _set_clip_root_velocities, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    clip_root_velocities: PackedVector3Array,
    /// Saved: the `res://` path of `source_scene`'s file (empty without one); see `source`.
    #[var(get = _get_source_path, set = _set_source_path, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    source_path: GString,
    /// Saved: the `uid://` of `source_scene`'s file (empty without one), which finds it after
    /// a move inside the project.
    #[var(get = _get_source_uid, set = _set_source_uid, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    source_uid: GString,
    /// Saved: a `source_scene` without a file of its own (built in memory), kept inside this
    /// resource.
    #[var(get = _get_source_embedded, set = _set_source_embedded, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    source_embedded: Option<Gd<PackedScene>>,
    /// Saved: per entry of `texture_variations`, its file as `uid|path` (empty for an empty
    /// entry or one without a file of its own).
    #[var(get = _get_variation_files, set = _set_variation_files, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    variation_files: PackedStringArray,
    /// Saved: per entry of `texture_variations`, the texture when it has no file of its own
    /// (else null).
    #[var(get = _get_variations_embedded, set = _set_variations_embedded, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    variations_embedded: Array<Option<Gd<Texture2D>>>,
    /// Baked: what the bake was made from, `path` and md5 of `source_scene`'s file (empty for a
    /// scene without a file), so the inspector can tell when the source changed since.
    #[var(get = _get_source_stamp, set = _set_source_stamp, usage_flags = [STORAGE, READ_ONLY, INTERNAL])]
    source_stamp: GString,
    /// Baked: which custom vertex channel (0-3: CUSTOM0-CUSTOM3) of `mesh` holds each vertex's VAT
    /// column; the first one the source meshes leave free. Shaders read it through `VAT_COLUMN`.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    column_channel: i32,
    /// Baked: the meshes of LOD1, LOD2, ... (LOD0 is `mesh`), drawn over the same textures.
    #[var(pub, usage_flags = [STORAGE, EDITOR, READ_ONLY])]
    pub(crate) lod_meshes: Array<Gd<ArrayMesh>>,
    /// Where the next bake writes its LOD input (`dump_lod_input`), then cleared.
    #[cfg(feature = "dev")]
    lod_dump: Option<(String, String)>,

    /// The source scene set in this session, or loaded from `source_uid` / `source_path` when
    /// first asked for (never when the resource loads: a game that only plays needs no source).
    source: std::cell::RefCell<Option<Gd<PackedScene>>>,
    /// `texture_variations` as set in this session, or as found from `variation_files` when
    /// first asked for.
    variation_inputs: std::cell::RefCell<Option<Array<Option<Gd<Texture2D>>>>>,
    /// The layers of `variations` read back from the renderer for a save, with the array's id.
    layer_readback: std::cell::RefCell<Option<(InstanceId, Array<Gd<Image>>)>>,
    /// The encoded VAT (sharing the textures' bytes), with the texture ids it was built from.
    cache: Option<(EncodedVat<output::GodotBytes>, [Option<InstanceId>; 2])>,
    stats: VarDictionary,
    /// The last inconsistency reported for the stored bake, so it is reported once.
    reported: std::cell::RefCell<String>,
    /// Bumped whenever the baked fields are replaced (a bake, `set_baked_state`): crowds compare
    /// it with the one they were built for ([`Self::bake_generation`]).
    generation: u64,
    base: Base<Resource>,
}

#[godot_api]
impl IResource for VertexAnimation {
    /// `source_scene` and `texture_variations` are shown, never saved: `source_path`,
    /// `source_uid`, `source_embedded`, `variation_files` and `variations_embedded` stand for
    /// them in the file.
    fn on_validate_property(&self, property: &mut godot::register::info::PropertyInfo) {
        if property.property_name == "source_scene"
            || property.property_name == "texture_variations"
        {
            use godot::obj::EngineBitfield;
            use godot::register::info::PropertyUsageFlags;
            let usage = property.usage.ord() & !PropertyUsageFlags::STORAGE.ord();
            property.usage = PropertyUsageFlags::from_ord(usage);
        }
    }
}

#[godot_api]
impl VertexAnimation {
    /// Emitted after each clip is sampled during a bake (`bake()` or a `start_bake()` job):
    /// `done` clips of `total`.
    #[signal]
    fn bake_progress(done: i32, total: i32);

    /// `storage`: every vertex's position per frame (the classic VAT).
    #[constant]
    pub const STORAGE_VERTICES: i32 = STORAGE_VERTICES;
    /// `storage`: one transform per bone per frame, skinned in the vertex shader.
    #[constant]
    pub const STORAGE_BONES: i32 = STORAGE_BONES;
    /// `storage`: bones where at least 4x smaller and no blend shape is animated, else vertices.
    #[constant]
    pub const STORAGE_AUTO: i32 = STORAGE_AUTO;

    /// Sets the character scene to bake from (and refreshes the inspector, whose clip picker
    /// lists the new scene's clips). Its file is remembered by path and uid, not as a
    /// dependency.
    #[func]
    pub fn set_source_scene(&mut self, scene: Option<Gd<PackedScene>>) {
        self.remember_source(scene);
        self.base_mut().notify_property_list_changed();
    }

    /// The character scene to bake from: the one set, else the one saved inside the resource,
    /// else its file found by uid or path (loaded on first use). Null when none is set, or when
    /// its file was moved out of the project or deleted (`get_bake_warnings()` says so).
    #[func]
    pub fn get_source_scene(&self) -> Option<Gd<PackedScene>> {
        self.source()
    }

    /// The texture variations: as set, else found by their files (uid, else path; loaded on
    /// first use). An entry whose file was moved out of the project or deleted reads null, and
    /// `get_bake_warnings()` says so.
    #[func]
    pub fn get_texture_variations(&self) -> Array<Option<Gd<Texture2D>>> {
        self.variations()
    }

    /// Sets the texture variations; each is remembered by its file (path and uid), or kept inside
    /// the resource when it has none.
    #[func]
    pub fn set_texture_variations(&mut self, textures: Array<Option<Gd<Texture2D>>>) {
        self.remember_variations(textures);
    }

    /// Internal: the saved `variation_layers` (no API; see the field). A resource loaded from an
    /// older file has only `variations`: its layers are read back from the renderer.
    #[func]
    fn _get_variation_layers(&self) -> Array<Gd<Image>> {
        if !self.variation_layers.is_empty() {
            return self.variation_layers.clone();
        }
        let Some(array) = &self.variations else {
            return Array::new();
        };
        // A saver asks twice (once to list the sub-resources, once to write them) and must get
        // the same Image objects both times: read back once per array.
        let mut cache = self.layer_readback.borrow_mut();
        if cache
            .as_ref()
            .is_none_or(|(id, _)| *id != array.instance_id())
        {
            let layers = (0..array.get_layers())
                .filter_map(|i| array.get_layer_data(i))
                .collect();
            *cache = Some((array.instance_id(), layers));
        }
        cache.as_ref().map(|(_, l)| l.clone()).unwrap_or_default()
    }

    /// Internal: restores the saved `variation_layers` and builds `variations` from them (no
    /// API; see the field).
    #[func]
    fn _set_variation_layers(&mut self, layers: Array<Gd<Image>>) {
        self.variations = if layers.is_empty() {
            None
        } else {
            match output::variations_from_layers(&layers) {
                Ok(array) => Some(array),
                Err(e) => {
                    godot_error!(
                        "vat_crowd: '{}': the saved variation layers do not make a Texture2DArray ({e}); it has no variations",
                        self.name_for_messages()
                    );
                    None
                }
            }
        };
        // The renderer keeps the layers (and gives them back when the resource is saved again)
        // except under --headless: only there does the resource keep the images in memory too.
        let headless = godot::classes::DisplayServer::singleton().get_name() == "headless";
        self.variation_layers = if headless { layers } else { Array::new() };
    }

    /// Internal: the saved `variation_files` (no API; see the field).
    #[func]
    fn _get_variation_files(&self) -> PackedStringArray {
        self.variation_files.clone()
    }

    /// Internal: restores the saved `variation_files` (no API; see the field).
    #[func]
    fn _set_variation_files(&mut self, value: PackedStringArray) {
        self.variation_files = value;
        self.variation_inputs.replace(None);
    }

    /// Internal: the saved `variations_embedded` (no API; see the field).
    #[func]
    fn _get_variations_embedded(&self) -> Array<Option<Gd<Texture2D>>> {
        self.variations_embedded.clone()
    }

    /// Internal: restores the saved `variations_embedded` (no API; see the field).
    #[func]
    fn _set_variations_embedded(&mut self, value: Array<Option<Gd<Texture2D>>>) {
        self.variations_embedded = value;
        self.variation_inputs.replace(None);
    }

    /// Internal: the saved `source_path` (no API; see the field).
    #[func]
    fn _get_source_path(&self) -> GString {
        self.source_path.clone()
    }

    /// Internal: restores the saved `source_path` (no API; see the field).
    #[func]
    fn _set_source_path(&mut self, value: GString) {
        self.source_path = value;
        self.source.replace(None);
    }

    /// Internal: the saved `source_uid` (no API; see the field).
    #[func]
    fn _get_source_uid(&self) -> GString {
        self.source_uid.clone()
    }

    /// Internal: restores the saved `source_uid` (no API; see the field).
    #[func]
    fn _set_source_uid(&mut self, value: GString) {
        self.source_uid = value;
        self.source.replace(None);
    }

    /// Internal: the saved `source_embedded` (no API; see the field).
    #[func]
    fn _get_source_embedded(&self) -> Option<Gd<PackedScene>> {
        self.source_embedded.clone()
    }

    /// Internal: restores the saved `source_embedded` (no API; see the field).
    #[func]
    fn _set_source_embedded(&mut self, value: Option<Gd<PackedScene>>) {
        self.source_embedded = value;
        self.source.replace(None);
    }

    /// Internal: the saved `source_stamp` (no API; see the field).
    #[func]
    pub fn _get_source_stamp(&self) -> GString {
        self.source_stamp.clone()
    }

    /// Internal: restores the saved `source_stamp` (no API; see the field).
    #[func]
    fn _set_source_stamp(&mut self, value: GString) {
        self.source_stamp = value;
    }

    /// Internal: the saved `clip_table` (no API; see the field).
    #[func]
    pub fn _get_clip_table(&self) -> PackedFloat32Array {
        self.clip_table.clone()
    }

    /// Internal: restores the saved `clip_table` (no API; see the field).
    #[func]
    fn _set_clip_table(&mut self, value: PackedFloat32Array) {
        self.clip_table = value;
    }

    /// Internal: the saved `clip_bounds_table` (no API; see the field).
    #[func]
    pub fn _get_clip_bounds_table(&self) -> PackedFloat32Array {
        self.clip_bounds_table.clone()
    }

    /// Internal: restores the saved `clip_bounds_table` (no API; see the field).
    #[func]
    fn _set_clip_bounds_table(&mut self, value: PackedFloat32Array) {
        self.clip_bounds_table = value;
    }

    /// Internal: the saved `baked_precision` (no API; see the field).
    #[func]
    pub fn _get_baked_precision(&self) -> i32 {
        self.baked_precision
    }

    /// Internal: restores the saved `baked_precision` (no API; see the field).
    #[func]
    fn _set_baked_precision(&mut self, value: i32) {
        self.baked_precision = value;
    }

    /// Internal: the saved `clip_root_velocities` (no API; see the field).
    #[func]
    pub fn _get_clip_root_velocities(&self) -> PackedVector3Array {
        self.clip_root_velocities.clone()
    }

    /// Internal: restores the saved `clip_root_velocities` (no API; see the field).
    #[func]
    fn _set_clip_root_velocities(&mut self, value: PackedVector3Array) {
        self.clip_root_velocities = value;
    }

    /// Internal: the saved `bone_influences` (no API; see the field).
    #[func]
    pub fn _get_bone_influences(&self) -> i32 {
        self.bone_influences
    }

    /// Internal: restores the saved `bone_influences` (no API; see the field).
    #[func]
    fn _set_bone_influences(&mut self, value: i32) {
        self.bone_influences = value;
    }

    /// Internal: the saved `bone_directions` (no API; see the field).
    #[func]
    pub fn _get_bone_directions(&self) -> i32 {
        self.bone_directions
    }

    /// Internal: restores the saved `bone_directions` (no API; see the field).
    #[func]
    fn _set_bone_directions(&mut self, value: i32) {
        self.bone_directions = value;
    }

    /// How the animation is stored: `STORAGE_VERTICES`, `STORAGE_BONES` or `STORAGE_AUTO` (see
    /// the property).
    #[func]
    pub fn get_storage(&self) -> i32 {
        self.storage
    }

    /// Sets how the next bake stores the animation (see the property).
    #[func]
    pub fn set_storage(&mut self, value: i32) {
        self.storage = value;
    }

    /// The body whose bone texture this model draws with (see the property).
    #[func]
    pub fn get_bone_source(&self) -> Option<Gd<VertexAnimation>> {
        self.bone_source.clone()
    }

    /// Sets the body whose bone texture this model draws with; a model cannot be its own.
    #[func]
    pub fn set_bone_source(&mut self, source: Option<Gd<VertexAnimation>>) {
        if source.as_ref().map(|s| s.instance_id()) == Some(self.base().instance_id()) {
            godot_error!(
                "vat_crowd: '{}' cannot be its own bone_source; it is left unchanged",
                self.name_for_messages()
            );
            return;
        }
        self.bone_source = source;
    }

    /// Whether this resource holds baked data.
    #[func]
    pub fn is_baked(&self) -> bool {
        !self.looks_unbaked() && self.stored_problem().is_none()
    }
}

impl VertexAnimation {
    fn bake_from_inspector(&mut self) {
        if self.bake() != Error::OK {
            return;
        }
        let path = self.base().get_path().to_string();
        if !path.is_empty() && !path.contains("::") {
            self.save_to(GString::from(path.as_str()));
        }
    }

    fn name_for_messages(&self) -> String {
        let path = self.base().get_path().to_string();
        if path.is_empty() {
            "VertexAnimation (unsaved)".into()
        } else {
            path
        }
    }
}
