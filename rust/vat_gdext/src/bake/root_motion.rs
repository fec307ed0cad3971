//! Root motion on the Godot side: finding the root bone, reading its travel from the clips'
//! position tracks, and moving it back while a clip is sampled so the clip plays in place. The
//! math lives in `vat_core::bake`.

use godot::classes::animation::TrackType;
use godot::classes::{Animation, AnimationPlayer, Node, Node3D, Skeleton3D};
use godot::prelude::*;

use crate::convert;

/// A share of the skeleton's size: a bone that an animation carries further than this across
/// the floor is a root-motion candidate.
const TRAVEL_FRACTION: f32 = 0.01;

/// The bone whose horizontal travel is root motion.
#[derive(Clone)]
pub struct RootBone {
    /// The skeleton holding it.
    pub skeleton: Gd<Skeleton3D>,
    /// Its index in `skeleton`.
    pub bone: i32,
}

impl RootBone {
    /// "Hips (Skeleton3D)" for messages.
    pub fn describe(&self) -> String {
        format!(
            "{} ({})",
            self.skeleton.get_bone_name(self.bone),
            self.skeleton.get_name()
        )
    }

    /// The transform from the bone's parent space (its pose's space) to the character root's,
    /// with the skeleton as posed now (`rest`: in its rest pose instead).
    fn parent_space(&self, root: &Gd<Node>, rest: bool) -> glam::Affine3A {
        let parent = self.skeleton.get_bone_parent(self.bone);
        let parent_pose = if parent < 0 {
            glam::Affine3A::IDENTITY
        } else if rest {
            convert::affine(self.skeleton.get_bone_global_rest(parent))
        } else {
            convert::affine(self.skeleton.get_bone_global_pose(parent))
        };
        root_inverse(root) * convert::affine(self.skeleton.get_global_transform()) * parent_pose
    }

    /// The index of `anim`'s position track that drives this bone, if any.
    fn position_track(&self, player: &Gd<AnimationPlayer>, anim: &Gd<Animation>) -> Option<i32> {
        (0..anim.get_track_count()).find(|&t| {
            anim.track_get_type(t) == TrackType::POSITION_3D
                && track_bone(player, anim, t)
                    .is_some_and(|(s, b)| s == self.skeleton && b == self.bone)
        })
    }

    /// The clip's average root velocity in character root space (units per second): the bone's
    /// travel between t = 0 and t = duration, read from its position track and carried into the
    /// root's space by its parent as posed now. Zero when no track moves the bone.
    pub fn clip_velocity(
        &self,
        root: &Gd<Node>,
        player: &Gd<AnimationPlayer>,
        anim: &Gd<Animation>,
        duration: f32,
    ) -> glam::Vec3 {
        let Some(track) = self.position_track(player, anim) else {
            return glam::Vec3::ZERO;
        };
        let delta = position_at(anim, track, f64::from(duration)) - position_at(anim, track, 0.0);
        let delta = self.parent_space(root, false).transform_vector3(delta);
        vat_core::bake::average_velocity(glam::Vec3::ZERO, delta, duration)
    }

    /// Moves the bone back by the in-place offset of clip time `t` (the pose Godot just set).
    pub fn move_back(&self, root: &Gd<Node>, velocity: glam::Vec3, t: f32) {
        let offset = vat_core::bake::in_place_offset(velocity, t);
        if offset == glam::Vec3::ZERO {
            return;
        }
        let local = self
            .parent_space(root, false)
            .inverse()
            .transform_vector3(offset);
        let mut skeleton = self.skeleton.clone();
        let pose = convert::vec3(skeleton.get_bone_pose_position(self.bone));
        skeleton.set_bone_pose_position(self.bone, convert::to_vector3(pose - local));
    }
}

/// Picks the root bone: the bone named `named` when set; else the player's `root_motion_track`
/// when it names a bone; else the first bone (in skeleton order) that carries at least half of
/// its skeleton (as their ancestor) and that one of `anims` moves across the floor by more than
/// 1% of the skeleton's size (a foot stepping forward is not root motion). `None` when no such
/// bone travels.
pub fn find_root_bone(
    root: &Gd<Node>,
    skeletons: &[Gd<Skeleton3D>],
    player: &Gd<AnimationPlayer>,
    named: &str,
    anims: &[(Gd<Animation>, f32)],
) -> Result<Option<RootBone>, String> {
    if !named.is_empty() {
        return skeletons
            .iter()
            .find_map(|s| {
                let bone = s.find_bone(named);
                (bone >= 0).then(|| RootBone {
                    skeleton: s.clone(),
                    bone,
                })
            })
            .map(Some)
            .ok_or_else(|| {
                format!("root_motion_bone '{named}' is not a bone of any skeleton of the character")
            });
    }
    let track = player.get_root_motion_track();
    if !track.is_empty() {
        if let Some((skeleton, bone)) = path_bone(player, &track) {
            return Ok(Some(RootBone { skeleton, bone }));
        }
        godot_warn!(
            "vat_crowd: the AnimationPlayer's root_motion_track '{track}' is not a bone; looking for the bone that travels instead"
        );
    }
    // Each skeleton's size, measured once (not per track of every clip).
    let extents: Vec<f32> = skeletons.iter().map(|s| skeleton_extent(root, s)).collect();
    let mut best: Option<RootBone> = None;
    for (anim, duration) in anims {
        for t in 0..anim.get_track_count() {
            if anim.track_get_type(t) != TrackType::POSITION_3D {
                continue;
            }
            let Some((skeleton, bone)) = track_bone(player, anim, t) else {
                continue;
            };
            let Some(extent) = skeletons
                .iter()
                .position(|s| *s == skeleton)
                .map(|i| extents[i])
            else {
                continue;
            };
            let earlier = best
                .as_ref()
                .is_none_or(|b| b.skeleton == skeleton && bone < b.bone);
            if !earlier || !carries_most(&skeleton, bone) {
                continue;
            }
            let candidate = RootBone { skeleton, bone };
            let delta = position_at(anim, t, f64::from(*duration)) - position_at(anim, t, 0.0);
            let delta = candidate.parent_space(root, true).transform_vector3(delta);
            if vat_core::bake::travels(delta, extent, TRAVEL_FRACTION) {
                best = Some(candidate);
            }
        }
    }
    Ok(best)
}

/// Whether `bone` is (or is an ancestor of) at least half of the skeleton's bones.
fn carries_most(skeleton: &Gd<Skeleton3D>, bone: i32) -> bool {
    let count = skeleton.get_bone_count();
    let carried = (0..count)
        .filter(|&b| {
            let mut at = b;
            while at >= 0 && at != bone {
                at = skeleton.get_bone_parent(at);
            }
            at == bone
        })
        .count();
    carried * 2 >= count as usize
}

/// The diagonal of the box around the skeleton's rest bone origins, in the root's space.
fn skeleton_extent(root: &Gd<Node>, skeleton: &Gd<Skeleton3D>) -> f32 {
    let to_root = root_inverse(root) * convert::affine(skeleton.get_global_transform());
    let points: Vec<glam::Vec3> = (0..skeleton.get_bone_count())
        .map(|b| {
            to_root.transform_point3(
                convert::affine(skeleton.get_bone_global_rest(b))
                    .translation
                    .into(),
            )
        })
        .collect();
    vat_core::bake::bounds_of(&points).size().length()
}

/// The inverse of the character root's global transform (identity for a plain Node root).
pub fn root_inverse(root: &Gd<Node>) -> glam::Affine3A {
    root.clone()
        .try_cast::<Node3D>()
        .map(|r| convert::affine(r.get_global_transform()).inverse())
        .unwrap_or(glam::Affine3A::IDENTITY)
}

fn position_at(anim: &Gd<Animation>, track: i32, time: f64) -> glam::Vec3 {
    convert::vec3(anim.position_track_interpolate(track, time))
}

/// The skeleton and bone that track `t` of `anim` drives, resolved as the player resolves it.
fn track_bone(
    player: &Gd<AnimationPlayer>,
    anim: &Gd<Animation>,
    t: i32,
) -> Option<(Gd<Skeleton3D>, i32)> {
    path_bone(player, &anim.track_get_path(t))
}

/// The bone a "Path/To/Skeleton3D:Bone" path names, relative to the player's root node.
fn path_bone(player: &Gd<AnimationPlayer>, path: &NodePath) -> Option<(Gd<Skeleton3D>, i32)> {
    if path.get_subname_count() != 1 {
        return None;
    }
    let base = player.get_node_or_null(&player.get_root_node())?;
    let names = path.get_concatenated_names();
    let node_path = NodePath::from(names.to_string().as_str());
    let skeleton = base
        .get_node_or_null(&node_path)?
        .try_cast::<Skeleton3D>()
        .ok()?;
    let bone = skeleton.find_bone(&path.get_subname(0).to_string());
    (bone >= 0).then_some((skeleton, bone))
}
