//! A bake in steps (part of `VertexAnimation`): prepare (instantiate, collect, plan), sample one
//! clip per step, build (skin, encode, LOD, Godot resources), commit. `bake()` runs them in one
//! call, `VertexAnimationBakeJob` one per frame. Nothing of the resource changes before the
//! commit, so a failed or cancelled bake keeps the previous one.

use std::time::{Duration, Instant};

use godot::classes::{Animation, AnimationPlayer, Node};
use godot::prelude::*;
use vat_core::bake::SkinEncoder;
use vat_core::bake::{EncodedVat, Precision, VatLayout};
use vat_core::bake::{MeshFrame, MeshSource};
use vat_core::bounds::Bounds;
use vat_core::clip::Clip;
use vat_core::lod_mesh::ColumnSource;

use super::clip_specs::{bake_notes, clip_sags, frame_labels, sag_notes};
use super::state::BakedState;
use super::{VertexAnimation, ROOT_MOTION_IN_PLACE};
use crate::bake::collect::Character;
use crate::bake::output::GodotBytes;
use crate::bake::root_motion::RootBone;
use crate::bake::{bones, collect, output, root_motion, sample, scene};
use crate::{convert, workers};

/// Where a bake finds its character.
pub(crate) enum BakeSource {
    /// `source_scene`, instantiated into the running tree for the time of the bake.
    Scene,
    /// A character already in the tree (a `VertexAnimationBaker`'s child), animated by `player`.
    Root {
        root: Gd<Node>,
        player: Gd<AnimationPlayer>,
        scene_name: String,
    },
}

/// The character found and the clips planned: what an estimate needs.
pub(crate) struct Plan {
    pub character: Character,
    pub clips: Vec<Clip>,
    root: Gd<Node>,
    player: Gd<AnimationPlayer>,
    pub scene_name: String,
    /// The instantiated `source_scene` (freed when the plan is dropped); `None` for a borrowed root.
    _instance: Option<scene::Instance>,
}

/// A bake between its steps: the character in the tree, the clips and what was sampled so far.
pub(crate) struct Prepared {
    plan: Plan,
    sources: Vec<MeshSource>,
    anims: Vec<(Gd<Animation>, f32)>,
    root_bone: Option<RootBone>,
    in_place: bool,
    precision: Precision,
    normals: bool,
    /// Whether tangents are baked too (a material uses a normal map).
    tangents: bool,
    frames: Vec<Vec<MeshFrame>>,
    velocities: Vec<glam::Vec3>,
    moving_clips: usize,
    /// Time spent in this bake's own steps so far (not in the frames between them).
    spent: Duration,
}

/// A finished bake not yet stored in its resource.
pub(crate) struct Built {
    state: BakedState,
    vat: EncodedVat<GodotBytes>,
    summary: String,
    /// Its bone texture, when it stores one of its own (for equipment baked in the same run).
    own_bones: Option<vat_core::bones::EncodedBones>,
}

impl Built {
    /// Its own bone texture as a body for equipment baked in the same run (`name` for messages;
    /// `offered`: see [`bones::SourceBones`]); `None` when it stores none.
    pub fn as_body(&self, name: String, offered: bool) -> Option<bones::SourceBones> {
        self.own_bones.as_ref().map(|b| bones::SourceBones {
            name,
            bones: b.clone(),
            offered,
        })
    }

    /// Whether it draws with another bake's bone texture (stores only its skin table).
    pub fn draws_shared_bones(&self) -> bool {
        self.state.baked_storage == bones::STORAGE_BONES && self.state.bone_texture.is_none()
    }
}

impl Prepared {
    /// Clips this bake samples.
    pub fn clip_count(&self) -> usize {
        self.plan.clips.len()
    }

    /// Samples the next clip; returns (clips done, clips in all), or `None` when all are done.
    pub fn sample_next(&mut self) -> Option<(i32, i32)> {
        let i = self.velocities.len();
        let (clip, (anim, _)) = (self.plan.clips.get(i)?, &self.anims[i]);
        let t0 = Instant::now();
        let sampled = sample::sample_clip(
            &mut self.plan.character,
            &self.plan.root,
            &mut self.plan.player,
            clip,
            anim,
            &sample::RootMotion {
                bone: self.root_bone.as_ref(),
                in_place: self.in_place,
            },
        );
        if vat_core::bake::frames_vary(&sampled.frames) {
            self.moving_clips += 1;
        }
        self.frames.extend(sampled.frames);
        self.velocities.push(sampled.root_velocity);
        self.spent += t0.elapsed();
        Some((i as i32 + 1, self.plan.clips.len() as i32))
    }
}

impl VertexAnimation {
    /// Finds the character and plans its clips from this resource's settings.
    pub(crate) fn plan(&self, source: BakeSource) -> Result<Plan, String> {
        let (instance, root, player, scene_name) = match source {
            BakeSource::Scene => {
                let scene = self.source().ok_or_else(|| match self.missing_source() {
                    Some(missing) => format!("'{}': {missing}", self.name_for_messages()),
                    None => format!(
                        "'{}' has no source_scene to bake from",
                        self.name_for_messages()
                    ),
                })?;
                let scene_name = match scene.get_path().to_string() {
                    p if p.is_empty() => "<unsaved scene>".to_string(),
                    p => p,
                };
                let instance = scene::Instance::new(&scene, &scene_name)?;
                let player = instance.animation_player(&self.animation_player, &scene_name)?;
                let root = instance.root.clone();
                (Some(instance), root, player, scene_name)
            }
            BakeSource::Root {
                root,
                player,
                scene_name,
            } => (None, root, player, scene_name),
        };
        let subset: Vec<NodePath> = self.meshes.iter_shared().collect();
        let character = collect::collect(&root, &subset, &scene_name)?;
        let specs = self.clip_specs(&player, &scene_name)?;
        let clips =
            vat_core::clip::plan_clips(&specs).map_err(|e| format!("{e} (in '{scene_name}')"))?;
        Ok(Plan {
            character,
            clips,
            root,
            player,
            scene_name,
            _instance: instance,
        })
    }

    /// The precision setting as the core takes it.
    pub(crate) fn precision_setting(&self) -> Result<Precision, String> {
        match self.precision {
            0 => Ok(Precision::Half),
            1 => Ok(Precision::Float),
            p => Err(format!(
                "precision is {p}; it must be 0 (Half) or 1 (Float)"
            )),
        }
    }

    /// Checks everything that can be checked before sampling and readies the bake.
    pub(crate) fn prepare(&self, source: BakeSource) -> Result<Prepared, String> {
        let t0 = Instant::now();
        let plan = self.plan(source)?;
        let scene_name = plan.scene_name.clone();
        let sources: Vec<_> = plan
            .character
            .meshes
            .iter()
            .map(|m| m.source.clone())
            .collect();
        vat_core::bake::validate(&sources).map_err(|e| format!("{e} (in '{scene_name}')"))?;
        let total_frames = vat_core::clip::total_frames(&plan.clips);
        output::check_variation_count(self.variations().len(), &self.name_for_messages())?;
        let missing = self.missing_variations();
        if !missing.is_empty() {
            return Err(format!(
                "'{}': {} missing (moved out of the project or deleted)",
                self.name_for_messages(),
                missing.join(", ")
            ));
        }
        // Refuse an oversized character before spending time sampling it.
        VatLayout::new(plan.character.vertex_count() as u32, total_frames)
            .map_err(|e| format!("{e} (in '{scene_name}')"))?;
        let precision = self.precision_setting()?;
        let anims = plan
            .clips
            .iter()
            .map(|c| {
                plan.player
                    .get_animation(c.name.as_str())
                    .map(|a| (a, c.duration))
                    .ok_or_else(|| {
                        format!("clip '{}' of '{scene_name}' could not be loaded", c.name)
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let root_bone = root_motion::find_root_bone(
            &plan.root,
            &plan.character.skeletons,
            &plan.player,
            &self.root_motion_bone.to_string(),
            &anims,
        )
        .map_err(|e| format!("{e} (in '{scene_name}')"))?;
        Ok(Prepared {
            sources,
            anims,
            root_bone,
            in_place: self.root_motion == ROOT_MOTION_IN_PLACE,
            precision,
            normals: super::state::bakes_normals(self.bake_normals, &plan.character),
            tangents: super::state::bakes_tangents(self.bake_normals, &plan.character),
            frames: Vec::with_capacity(total_frames as usize),
            velocities: Vec::with_capacity(plan.clips.len()),
            moving_clips: 0,
            spent: t0.elapsed(),
            plan,
        })
    }

    /// Skins, encodes and builds the resources of a fully sampled bake, without storing them.
    /// `body`: the bone texture to draw with, when another bake of the same run provides it;
    /// `None` takes `bone_source`'s stored bake (if set).
    pub(crate) fn build(
        &self,
        p: &Prepared,
        body: Option<&bones::SourceBones>,
    ) -> Result<Built, String> {
        let scene_name = p.plan.scene_name.as_str();
        let clips = &p.plan.clips;
        let character = &p.plan.character;
        // The failure this catches is silent otherwise: Godot did not pose the character (it was
        // not in a running tree, or something froze it), and every frame is the rest pose.
        if p.moving_clips == 0 && p.anims.iter().any(|(a, _)| sample::animation_moves(a)) {
            return Err(format!(
                "the clips of '{scene_name}' animate it, but none of its {} sampled frames moves: Godot did not pose the character (is the SceneTree running? is the AnimationPlayer active?); nothing was baked",
                p.frames.len()
            ));
        }
        let t_sampled = Instant::now();
        let labels = frame_labels(clips);
        // Skinning and encoding are fused (vat_core::bake::skin_encode): pass 1 skins positions for the
        // bounds and finds every error ("skinning"), pass 2 skins again and encodes straight into
        // the textures' Godot arrays ("encoding").
        let (sources, frames, precision, normals) = (&p.sources, &p.frames, p.precision, p.normals);
        let core_clips: &[Clip] = clips;
        let encoder = workers::install(|| {
            let label = |f: usize| labels[f].clone();
            SkinEncoder::new(sources, frames, &label, core_clips, precision, normals)
        })
        .map_err(|e| format!("{e} (in '{scene_name}')"))?;
        let t_skinned = Instant::now();
        let vat = output::encode_into_godot(encoder);
        // Tangents are skinned as normals are (vat_core::bake::tangent_sources): the same
        // skinning over the tangents gives the tangent texture, laid out as the normals.
        let tangent_vat = if p.tangents {
            let tangent_sources =
                vat_core::bake::tangent_sources(sources, &character.tangent_directions());
            let encoder = workers::install(|| {
                let label = |f: usize| labels[f].clone();
                SkinEncoder::new(
                    &tangent_sources,
                    frames,
                    &label,
                    core_clips,
                    precision,
                    true,
                )
            })
            .map_err(|e| format!("{e} (in the tangents of '{scene_name}')"))?;
            Some(output::encode_tangents_into_godot(encoder, &vat))
        } else {
            None
        };
        let t_encoded = Instant::now();
        #[cfg(feature = "dev")]
        self.write_lod_dump(character, &vat, clips)?;

        let textures: Vec<_> = self.variations().iter_shared().collect();
        let (variations, variation_layers) =
            match output::variations(&textures, &self.name_for_messages())? {
                Some((array, layers)) => (Some(array), layers),
                None => (None, Array::new()),
            };
        let mut state = BakedState {
            variations,
            variation_layers,
            source_stamp: self.source_stamp_now(),
            ..BakedState::default()
        };
        let lod = self
            .build_lod(
                character,
                &vat,
                tangent_vat.as_ref(),
                clips,
                &textures,
                scene_name,
            )
            .map_err(|e| format!("{e} (in '{scene_name}')"))?;
        let mut bound_level = None;
        let (vat, tangent_vat, mut lod_stats) = match lod {
            Some(Ok(built)) => {
                bound_level = built.bound_level;
                let mut meshes = built.meshes.into_iter();
                state.mesh = meshes.next();
                state.lod_meshes = meshes.collect();
                state.column_channel = output::free_custom_channel(character)?;
                (built.vat, built.tangents, Some(Ok(built.summary)))
            }
            other => {
                let (mesh, column_channel) =
                    output::combined_mesh(character, &vat, tangent_vat.as_ref())
                        .map_err(|e| format!("{e} (in '{scene_name}')"))?;
                state.mesh = Some(mesh);
                state.column_channel = column_channel;
                (vat, tangent_vat, other.map(|o| o.map(|b| b.summary)))
            }
        };
        state.clip_root_velocities = p
            .velocities
            .iter()
            .map(|v| convert::to_vector3(*v))
            .collect();
        let vertex_bytes = vat.positions.len()
            + vat.normals.len()
            + tangent_vat.as_ref().map_or(0, |t| t.normals.len());
        let columns: Vec<ColumnSource> = match &lod_stats {
            Some(Ok(summary)) => summary.columns.clone(),
            _ => (0..vat.layout.vertex_count)
                .map(ColumnSource::Vertex)
                .collect(),
        };
        let stored = match body {
            Some(_) => None,
            None => self.bone_source_bones()?,
        };
        let source = body.or(stored.as_ref());
        let storage = bones::choose(
            self.storage,
            &bones::BoneInputs {
                character,
                sources,
                frames,
                columns: &columns,
                vat: &vat,
                vertex_bytes,
                source,
                bound_level: bound_level.as_ref(),
            },
        )
        .map_err(|e| format!("{e} (in '{scene_name}')"))?;
        let mut shared_translation = None;
        let mut own_bones = None;
        let (texture_bytes, storage_why, bone_error) = match storage {
            bones::Storage::Vertices(why) => {
                state.position_texture = Some(output::position_texture(&vat));
                state.normal_texture = output::normal_texture(&vat);
                state.tangent_texture = tangent_vat.as_ref().and_then(output::normal_texture);
                (vertex_bytes, why, None)
            }
            bones::Storage::Bones {
                bones,
                why,
                error,
                shared,
                bound_report,
            } => {
                if let (Some((kept, report)), Some(Ok(summary))) = (bound_report, &mut lod_stats) {
                    match bones::bound_level_dropped(kept, &report, scene_name) {
                        None => summary.levels[kept].bone_report = Some(report),
                        Some(why) => {
                            godot_warn!("vat_crowd: {why}");
                            summary.levels.remove(kept);
                            summary.notes.push(why);
                            // `lod_meshes` holds the levels after LOD0.
                            state.lod_meshes.remove(kept - 1);
                        }
                    }
                }
                state.baked_storage = bones::STORAGE_BONES;
                // Equipment draws with its body's bone texture: no texture of its own.
                state.bone_texture = (!shared).then(|| bones::bone_texture(&bones));
                if shared {
                    shared_translation = Some((bones.offset, bones.scale, bones.precision));
                }
                state.skin_texture = Some(bones::skin_texture(&bones));
                state.bone_count = bones.palette as i32;
                state.bone_influences = bones.influences as i32;
                state.bone_directions = i32::from(p.normals) | (i32::from(p.tangents) << 1);
                let own = if shared { 0 } else { bones.bones.len() };
                let bytes = own + bones.skin.len();
                if !shared {
                    own_bones = Some(bones);
                }
                (bytes, why, Some(error))
            }
        };
        state.clip_texture = Some(output::clip_texture(&vat_core::clip::pack_clip_table(
            clips,
        )));
        store_tables(&mut state, clips, &vat);
        if let Some((offset, scale, precision)) = shared_translation {
            // The body's bone texture decodes with the body's encoding.
            state.encoding_offset = convert::to_vector3(offset);
            state.encoding_scale = convert::to_vector3(scale);
            state.baked_precision = i32::from(precision == Precision::Float);
        }
        let sags = clip_sags(&vat, clips);
        let t_built = Instant::now();

        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let sample_ms = ms(p.spent);
        let total_ms = sample_ms + ms(t_built - t_sampled);
        let bytes = vertex_bytes;
        let storage_name = if bone_error.is_some() {
            "bones"
        } else {
            "vertices"
        };
        let summary = format!(
            "baked '{scene_name}': {} vertices, {} frames, {} clips, storage {storage_name} ({storage_why}), {texture_bytes} texture bytes, {:.1} ms (sampling {:.1}, skinning {:.1}, encoding {:.1})",
            vat.layout.vertex_count,
            vat.layout.frame_count,
            clips.len(),
            total_ms,
            sample_ms,
            ms(t_skinned - t_sampled),
            ms(t_encoded - t_skinned),
        ) + &bake_notes(clips, p.root_bone.as_ref(), p.in_place, &p.velocities)
            + &sag_notes(clips, &sags);
        let mut stats = VarDictionary::new();
        stats.set("clip_sag", &PackedFloat32Array::from(sags.as_slice()));
        stats.set("vertices", vat.layout.vertex_count as i64);
        stats.set("frames", vat.layout.frame_count as i64);
        stats.set("clips", clips.len() as i64);
        stats.set("texture_width", vat.layout.width as i64);
        stats.set("texture_height", vat.layout.height as i64);
        stats.set("bytes", bytes as i64);
        stats.set("texture_bytes", texture_bytes as i64);
        stats.set("storage", storage_name);
        stats.set("storage_reason", storage_why.as_str());
        stats.set("bone_count", i64::from(state.bone_count));
        stats.set("bone_error", f64::from(bone_error.unwrap_or(0.0)));
        stats.set("sample_ms", sample_ms);
        stats.set("skin_ms", ms(t_skinned - t_sampled));
        stats.set("encode_ms", ms(t_encoded - t_skinned));
        stats.set("build_ms", ms(t_built - t_encoded));
        stats.set("total_ms", total_ms);
        stats.set("summary", summary.as_str());
        Self::add_lod_stats(&mut stats, lod_stats.as_ref());
        state.stats = stats;
        Ok(Built {
            state,
            vat,
            summary,
            own_bones,
        })
    }

    /// Stores a built bake in this resource, all fields at once; returns its summary.
    pub(crate) fn commit(&mut self, built: Built) -> String {
        let Built {
            state,
            vat,
            summary,
            ..
        } = built;
        self.put_state(state);
        let ids = [
            self.position_texture.as_ref().map(|t| t.instance_id()),
            self.normal_texture.as_ref().map(|t| t.instance_id()),
        ];
        self.cache = Some((vat, ids));
        self.reported.borrow_mut().clear();
        self.base_mut().emit_changed();
        summary
    }

    /// All steps in one call (`bake()`), with `bake_progress` after each clip.
    pub(super) fn bake_impl(&mut self) -> Result<String, String> {
        let mut prepared = self.prepare(BakeSource::Scene)?;
        while let Some((done, total)) = prepared.sample_next() {
            self.signals().bake_progress().emit(done, total);
        }
        let built = self.build(&prepared, None)?;
        drop(prepared);
        Ok(self.commit(built))
    }
}

/// The clip tables, bounds and encoding of `vat` into `state`.
fn store_tables<B>(state: &mut BakedState, clips: &[Clip], vat: &EncodedVat<B>) {
    state.vertex_count = vat.layout.vertex_count as i32;
    state.frame_count = vat.layout.frame_count as i32;
    state.bounds = convert::to_aabb(&vat.bounds);
    state.clip_names = clips
        .iter()
        .map(|c| GString::from(c.name.as_str()))
        .collect();
    state.clip_table = clips
        .iter()
        .flat_map(|c| {
            [
                c.first_frame as f32,
                c.frame_count as f32,
                c.fps,
                c.duration,
                f32::from(u8::from(c.looped)),
            ]
        })
        .collect();
    state.clip_bounds_table = vat
        .clip_bounds
        .iter()
        .flat_map(|b: &Bounds| [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z])
        .collect();
    state.encoding_offset = convert::to_vector3(vat.params.offset);
    state.encoding_scale = convert::to_vector3(vat.params.scale);
    state.baked_precision = match vat.params.precision {
        Precision::Half => 0,
        Precision::Float => 1,
    };
}
