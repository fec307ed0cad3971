//! The editor preview both crowd nodes share: from `preview_count`, `preview_clip` and the
//! node's baked models, what to draw in the editor viewport (a grid of instances playing one
//! clip, see `vat_core::crowd`), or nothing.
//!
//! The preview lives only in the node's run-time state (instances or actors, never a child node
//! or a stored property), so a saved scene cannot hold it; and it is drawn only while
//! `Engine.is_editor_hint()` is true, so a game never shows it.

use godot::prelude::*;
use godot::register::info::{PropertyHint, PropertyHintInfo, PropertyInfo};

use crate::crowd::gpu::report_once;
use crate::editor;
use crate::vertex_animation::VertexAnimation;

/// What the preview draws; a change of any part redraws it.
#[derive(Clone, PartialEq, Debug)]
pub struct Shown {
    /// The clip every preview instance plays.
    pub clip: u32,
    /// The grid, in the node's space.
    pub positions: Vec<[f32; 3]>,
    /// The models drawn (a new or rebaked resource redraws).
    models: Vec<InstanceId>,
}

/// The preview a node should show this frame: `None` outside the editor, with `count` 0, or
/// while the models cannot draw (the configuration warnings say why). A `clip` that names no
/// baked clip is reported once per distinct error in `error`, naming `node`.
pub fn wanted(
    node: &str,
    count: i32,
    clip: &GString,
    models: &[Gd<VertexAnimation>],
    error: &mut Option<String>,
) -> Option<Shown> {
    if count <= 0 || !editor::in_editor() {
        *error = None;
        return None;
    }
    let first = models.first()?;
    let (clip, size) = {
        let first = first.bind();
        if !first.is_baked() {
            return None;
        }
        match vat_core::crowd::preview_clip_index(&clip.to_string(), &first.clips()) {
            Ok(c) => (c, first.get_clip_bounds(c as i32).size),
            Err(e) => {
                report_once(
                    error,
                    node,
                    format!("preview_clip: {e}; nothing is previewed"),
                );
                return None;
            }
        }
    };
    *error = None;
    Some(Shown {
        clip: clip as u32,
        positions: vat_core::crowd::preview_grid(
            count as usize,
            vat_core::crowd::preview_spacing([size.x, size.y, size.z]),
        ),
        models: models.iter().map(|m| m.instance_id()).collect(),
    })
}

/// `preview_count` if it passes `vat_core::crowd::check_preview_count`, else an error naming `node`
/// and the kept value.
pub fn checked_count(node: &str, count: i32, keeps: i32) -> i32 {
    match vat_core::crowd::check_preview_count(i64::from(count)) {
        Ok(_) => count,
        Err(e) => {
            godot_error!("vat_crowd: {node}.preview_count: {e}; it stays {keeps}");
            keeps
        }
    }
}

/// Shapes the inspector's `preview_clip` field from `model`'s clips: while `current` is empty
/// it shows the clip the preview plays (the first) greyed in the empty field; once set, it offers
/// every clip name as a suggestion (an index can still be typed).
pub fn suggest_clips(
    property: &mut PropertyInfo,
    model: Option<&Gd<VertexAnimation>>,
    current: &GString,
) {
    if property.property_name != "preview_clip" {
        return;
    }
    let Some(model) = model else {
        return;
    };
    let names: Vec<String> = model.bind().clips().into_iter().map(|c| c.name).collect();
    let Some(first) = names.first() else {
        return;
    };
    property.hint_info = if current.is_empty() {
        PropertyHintInfo {
            hint: PropertyHint::PLACEHOLDER_TEXT,
            hint_string: GString::from(format!("{first} (the first clip)").as_str()),
        }
    } else {
        PropertyHintInfo {
            hint: PropertyHint::ENUM_SUGGESTION,
            hint_string: GString::from(names.join(",").as_str()),
        }
    };
}
