//! Sampling a character's poses for every frame of a clip, exactly as Godot poses it.

use godot::classes::{Animation, AnimationPlayer, BoneAttachment3D, Node, Skeleton3D};
use godot::prelude::*;
use vat_core::bake::MeshFrame;
use vat_core::clip::Clip;

use super::collect::Character;
use super::root_motion::{root_inverse, RootBone};
use crate::convert;

/// How a clip's root motion is handled while sampling it.
pub struct RootMotion<'a> {
    /// The root bone, if the character has one that travels.
    pub bone: Option<&'a RootBone>,
    /// Take the root's horizontal drift out of every frame.
    pub in_place: bool,
}

/// A clip's sampled poses and its average root velocity (character root space, measured before
/// any removal).
pub struct SampledClip {
    /// Per frame, per mesh: transform relative to the character root, skin matrices, blend weights.
    pub frames: Vec<Vec<MeshFrame>>,
    /// Average root velocity over the clip (zero without a root bone).
    pub root_velocity: glam::Vec3,
}

/// Poses the character at every frame of `clip` (the player's animation `anim`) and records, per
/// mesh, its transform relative to the character root, its skin matrices and its blend-shape
/// weights.
pub fn sample_clip(
    character: &mut Character,
    root: &Gd<Node>,
    player: &mut Gd<AnimationPlayer>,
    clip: &Clip,
    anim: &Gd<Animation>,
    root_motion: &RootMotion,
) -> SampledClip {
    // Start every clip from the rest pose so nothing a previous clip keyed leaks into this one.
    for skeleton in character.skeletons.iter_mut() {
        skeleton.reset_bone_poses();
    }
    player.play_ex().name(clip.name.as_str()).done();
    let mut root_velocity = glam::Vec3::ZERO;
    let frames = (0..clip.frame_count)
        .map(|k| {
            let t = clip.frame_time(k);
            player.seek_ex(f64::from(t)).update(true).done();
            if let Some(bone) = root_motion.bone {
                if k == 0 && !clip.is_pose() {
                    root_velocity = bone.clip_velocity(root, player, anim, clip.duration);
                }
                if root_motion.in_place {
                    bone.move_back(root, root_velocity, t);
                }
            }
            pose_now(character, root)
        })
        .collect();
    player.stop();
    SampledClip {
        frames,
        root_velocity,
    }
}

/// Reads the current pose of every mesh.
fn pose_now(character: &mut Character, root: &Gd<Node>) -> Vec<MeshFrame> {
    for skeleton in character.skeletons.iter_mut() {
        skeleton.force_update_all_bone_transforms();
    }
    // A BoneAttachment3D only follows its bone once a frame has been processed; place each one
    // where it will be (skeleton transform x bone global pose), in scene order so nested ones work.
    for attachment in character.attachments.iter_mut() {
        place_attachment(attachment);
    }
    // Relative to the character root, so motion of the root itself is not baked in.
    let root_inv = root_inverse(root);
    character
        .meshes
        .iter()
        .map(|mesh| {
            let pre = root_inv * convert::affine(mesh.node.get_global_transform());
            let bones = mesh
                .skin
                .as_ref()
                .map(|link| {
                    link.bind_bones
                        .iter()
                        .zip(&link.bind_poses)
                        .map(|(&bone, bind)| {
                            convert::affine(link.skeleton.get_bone_global_pose(bone)) * *bind
                        })
                        .collect()
                })
                .unwrap_or_default();
            let blend_weights = (0..mesh.source.blend_shapes.len())
                .map(|i| mesh.node.get_blend_shape_value(i as i32))
                .collect();
            MeshFrame {
                pre,
                bones,
                blend_weights,
            }
        })
        .collect()
}

fn place_attachment(attachment: &mut Gd<BoneAttachment3D>) {
    if attachment.get_override_pose() {
        return;
    }
    let skeleton = if attachment.get_use_external_skeleton() {
        let path = attachment.get_external_skeleton();
        attachment.get_node_or_null(&path)
    } else {
        attachment.get_parent()
    }
    .and_then(|n| n.try_cast::<Skeleton3D>().ok());
    let bone = attachment.get_bone_idx();
    if let Some(skeleton) = skeleton {
        if bone >= 0 && bone < skeleton.get_bone_count() {
            let global = skeleton.get_global_transform() * skeleton.get_bone_global_pose(bone);
            attachment.set_global_transform(global);
        }
    }
}

/// Whether `anim` moves anything a bake can see: a position, rotation, scale, blend-shape or
/// value track with two keys of different values.
pub fn animation_moves(anim: &Gd<Animation>) -> bool {
    use godot::classes::animation::TrackType;
    (0..anim.get_track_count()).any(|t| {
        let kind = anim.track_get_type(t);
        let moving_kind = [
            TrackType::POSITION_3D,
            TrackType::ROTATION_3D,
            TrackType::SCALE_3D,
            TrackType::BLEND_SHAPE,
            TrackType::VALUE,
        ]
        .contains(&kind);
        let keys = anim.track_get_key_count(t);
        moving_kind && keys > 1 && {
            let first = anim.track_get_key_value(t, 0);
            (1..keys).any(|k| anim.track_get_key_value(t, k) != first)
        }
    })
}
