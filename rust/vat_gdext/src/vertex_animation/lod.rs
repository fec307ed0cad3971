//! VertexAnimation's levels of detail: the baked LOD meshes and where each level starts.

use godot::classes::{ArrayMesh, Texture2D};
use godot::prelude::*;
use vat_core::bake::EncodedVat;
use vat_core::clip::Clip;
use vat_core::lod_distance::{actor_diameter, screen_constant, LodCurve};

use super::VertexAnimation;
use crate::bake::collect::Character;
use crate::bake::lod::{bake_lod, LodBake, LodSummary};
use crate::bake::output::GodotBytes;
use crate::convert;
use vat_core::lod_mesh::{ColumnSource, LodSettings};

#[godot_api(secondary)]
impl VertexAnimation {
    /// Levels of detail this character has: 1 (only `mesh`) until a bake builds LOD meshes.
    #[func]
    pub fn get_lod_count(&self) -> i32 {
        if self.mesh.is_none() {
            return 0;
        }
        1 + self.lod_meshes.len() as i32
    }

    /// The mesh of level `lod` (0 is `mesh`), or null with an error when there is no such level.
    #[func]
    pub fn get_lod_mesh(&self, lod: i32) -> Option<Gd<ArrayMesh>> {
        let count = self.get_lod_count();
        if lod < 0 || lod >= count {
            godot_error!(
                "vat_crowd: {}: LOD {lod} does not exist; valid levels are 0 to {}",
                self.name_for_messages(),
                count - 1
            );
            return None;
        }
        if lod == 0 {
            self.mesh.clone()
        } else {
            self.lod_meshes.get(lod as usize - 1)
        }
    }

    /// The distances in metres at which LOD1, LOD2, ... start for an actor at scale 1, for a camera
    /// with vertical field of view `fov_degrees` drawing an image `image_height` pixels high (the
    /// height does not change them: the LOD threshold scales with it). One entry per level past
    /// LOD0 that this character has; empty when it is not baked or the settings are invalid.
    #[func]
    pub fn get_lod_switch_distances(
        &self,
        fov_degrees: f64,
        image_height: i32,
    ) -> PackedFloat32Array {
        let Some(curve) = self.lod_curve() else {
            return PackedFloat32Array::new();
        };
        if image_height <= 0 {
            godot_error!("vat_crowd: image height {image_height} must be positive");
            return PackedFloat32Array::new();
        }
        let c = screen_constant((fov_degrees as f32).to_radians());
        if c <= 0.0 {
            godot_error!(
                "vat_crowd: field of view {fov_degrees} degrees must lie between 0 and 180"
            );
            return PackedFloat32Array::new();
        }
        let d = self.lod_diameter();
        (1..self.get_lod_count())
            .map(|level| curve.switch_distance(level as f32, d, c))
            .collect()
    }
}

impl VertexAnimation {
    /// The LOD formula's `D` for this character at scale 1 (from its baked bounds).
    pub fn lod_diameter(&self) -> f32 {
        actor_diameter(&convert::bounds(self.bounds), 1.0)
    }

    /// The LOD curve calibrated from `lod_distances` and the baked bounds; `None` (with one
    /// error) when those settings are invalid, and `None` silently when nothing is baked.
    pub fn lod_curve(&self) -> Option<LodCurve> {
        self.mesh.as_ref()?;
        let d = self.lod_distances.as_slice();
        let switch = [
            d.first().copied().unwrap_or(f32::NAN),
            d.get(1).copied().unwrap_or(f32::NAN),
        ];
        match LodCurve::calibrate(self.lod_diameter(), switch) {
            Ok(curve) => Some(curve),
            Err(e) => {
                let message = format!("{}: lod_distances: {e}", self.name_for_messages());
                if *self.reported.borrow() != message {
                    godot_error!("vat_crowd: {message}");
                    *self.reported.borrow_mut() = message;
                }
                None
            }
        }
    }
}

impl VertexAnimation {
    /// The LOD settings as the core takes them.
    fn lod_settings(&self) -> LodSettings {
        LodSettings {
            lod1_ratio: self.lod1_ratio,
            head_bone: self.lod_head_bone.to_string(),
            lod2_triangles: self.lod2_triangles.max(0) as u32,
            voxel_size: self.lod_voxel_size,
            ..LodSettings::default()
        }
    }

    /// Builds the LOD chain when `lod_enabled` (see `bake::lod::bake_lod`): `None` when off.
    pub(super) fn build_lod(
        &self,
        character: &Character,
        vat: &EncodedVat<GodotBytes>,
        tangents: Option<&EncodedVat<GodotBytes>>,
        clips: &[Clip],
        variations: &[Option<Gd<Texture2D>>],
        scene_name: &str,
    ) -> Result<Option<Result<LodBake, String>>, String> {
        if !self.lod_enabled {
            return Ok(None);
        }
        if self.lod2_triangles <= 0 {
            return Err(format!(
                "lod2_triangles is {}; it must be at least 1",
                self.lod2_triangles
            ));
        }
        bake_lod(
            character,
            vat,
            tangents,
            clips,
            &self.lod_settings(),
            variations,
            scene_name,
        )
        .map(Some)
    }

    /// Adds the LOD figures to the bake stats: `lods` (per kept level: level, vertices,
    /// triangles, vat_columns, holes_pct, loss_pct, worst_view, worst_pose, silhouette, and
    /// bone_holes_pct and bone_loss_pct for a level whose bone storage draws other points),
    /// source_vertices, vat_bytes_before, vat_bytes_after, lod_ms, lod_notes, and
    /// lod_column_sources (6 floats per VAT column: three source vertices, then their weights).
    pub(super) fn add_lod_stats(
        stats: &mut VarDictionary,
        lod: Option<&Result<LodSummary, String>>,
    ) {
        let mut lods: VarArray = VarArray::new();
        let mut notes = PackedStringArray::new();
        let bytes = stats.get("bytes").unwrap_or(Variant::from(0));
        let vertices = stats.get("vertices").unwrap_or(Variant::from(0));
        let (mut before, mut after, mut source, mut ms) =
            (bytes.clone(), bytes, vertices, Variant::from(0.0));
        match lod {
            Some(Ok(s)) => {
                for (i, l) in s.levels.iter().enumerate() {
                    let mut d = VarDictionary::new();
                    d.set("level", i as i64);
                    d.set("built_level", l.built_level as i64);
                    d.set("vertices", l.vertices as i64);
                    d.set("triangles", l.triangles as i64);
                    d.set("vat_columns", l.columns as i64);
                    d.set("holes_pct", f64::from(l.report.holes_pct));
                    d.set("loss_pct", f64::from(l.report.loss_pct));
                    d.set("worst_view", i64::from(l.report.worst_view));
                    d.set("worst_pose", i64::from(l.report.worst_pose));
                    d.set("silhouette", &l.image);
                    if let Some(bones) = l.bone_report {
                        d.set("bone_holes_pct", f64::from(bones.holes_pct));
                        d.set("bone_loss_pct", f64::from(bones.loss_pct));
                    }
                    lods.push(&d.to_variant());
                }
                before = Variant::from(s.bytes_before as i64);
                after = Variant::from(s.bytes_after as i64);
                source = Variant::from(s.source_vertices as i64);
                ms = Variant::from(s.ms);
                for d in &s.notes {
                    notes.push(d.as_str());
                }
                let sources: PackedFloat32Array = s
                    .columns
                    .iter()
                    .flat_map(|c| match *c {
                        ColumnSource::Vertex(v) => [v as f32, v as f32, v as f32, 1.0, 0.0, 0.0],
                        ColumnSource::Bound {
                            vertices: [a, b, c],
                            weights: [x, y, z],
                        } => [a as f32, b as f32, c as f32, x, y, z],
                    })
                    .collect();
                stats.set("lod_column_sources", &sources);
            }
            Some(Err(why)) => notes.push(why.as_str()),
            None => {}
        }
        stats.set("lods", &lods);
        stats.set("source_vertices", &source);
        stats.set("vat_bytes_before", &before);
        stats.set("vat_bytes_after", &after);
        stats.set("lod_ms", &ms);
        stats.set("lod_notes", &notes);
    }
}
