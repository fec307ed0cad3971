//! Sampling a character's poses for every frame of a clip, exactly as Godot poses it.

use godot::classes::{AnimationPlayer, BoneAttachment3D, Node, Node3D, Skeleton3D};
use godot::prelude::*;
use vat_core::clip::Clip;
use vat_core::skin::MeshFrame;

use super::collect::Character;
use crate::convert;

/// Poses the character at every frame of `clip` and records, per mesh, its transform relative to
/// the character root, its skin matrices and its blend-shape weights.
pub fn sample_clip(
    character: &mut Character,
    root: &Gd<Node>,
    player: &mut Gd<AnimationPlayer>,
    clip: &Clip,
) -> Vec<Vec<MeshFrame>> {
    // Start every clip from the rest pose so nothing a previous clip keyed leaks into this one.
    for skeleton in character.skeletons.iter_mut() {
        skeleton.reset_bone_poses();
    }
    player.play_ex().name(clip.name.as_str()).done();
    let frames = (0..clip.frame_count)
        .map(|k| {
            player
                .seek_ex(f64::from(clip.frame_time(k)))
                .update(true)
                .done();
            pose_now(character, root)
        })
        .collect();
    player.stop();
    frames
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
    let root_inv = root
        .clone()
        .try_cast::<Node3D>()
        .map(|r| convert::affine(r.get_global_transform()).inverse())
        .unwrap_or(glam::Affine3A::IDENTITY);
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
