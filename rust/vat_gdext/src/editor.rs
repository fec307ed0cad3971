//! What the nodes show and do in the editor: whether they run in it, and the texts of their
//! configuration warnings (the yellow triangle in the Scene dock).
//!
//! The warnings are built here, from the nodes' properties, so each node's
//! `get_configuration_warnings` is one call and the texts stay in one place.

use godot::classes::Engine;
use godot::prelude::*;

use crate::vertex_animation::VertexAnimation;

/// True while running inside the editor (`Engine.is_editor_hint()`).
pub fn in_editor() -> bool {
    Engine::singleton().is_editor_hint()
}

/// Texts for an `AnimatedMeshInstance` drawing `animation`.
pub fn animation_warnings(animation: Option<&Gd<VertexAnimation>>) -> Vec<String> {
    match animation {
        None => vec![
            "No animation: assign a baked VertexAnimation to `animation`; nothing is drawn until then."
                .into(),
        ],
        Some(a) if !a.bind().is_baked() => vec![format!(
            "`animation` ({}) is not baked: select it and press Bake; nothing is drawn until then.",
            describe(a)
        )],
        Some(_) => Vec::new(),
    }
}

/// Every problem with an `AnimatedActorMeshInstance`'s `models`, in the order the crowd reports
/// them when it builds: empty entries, no models, unbaked models, clip tables that differ from
/// the first baked model's. The node refuses to draw while there is any.
pub fn model_problems(models: &Array<Option<Gd<VertexAnimation>>>) -> Vec<String> {
    let mut problems: Vec<String> = models
        .iter_shared()
        .enumerate()
        .filter(|(_, m)| m.is_none())
        .map(|(i, _)| format!("models[{i}] is empty"))
        .collect();
    let present: Vec<(usize, Gd<VertexAnimation>)> = models
        .iter_shared()
        .enumerate()
        .filter_map(|(i, m)| m.map(|m| (i, m)))
        .collect();
    if models.is_empty() {
        problems.push("no models are set".into());
    }
    let mut first: Option<(usize, Vec<vat_core::clip::Clip>)> = None;
    for (i, m) in &present {
        let b = m.bind();
        if !b.is_baked() {
            problems.push(format!("models[{i}] ({}) is not baked", describe(m)));
            continue;
        }
        let clips = b.clips();
        match &first {
            None => first = Some((*i, clips)),
            Some((f, first_clips)) => {
                let same = clips.len() == first_clips.len()
                    && clips.iter().zip(first_clips).all(|(a, c)| {
                        a.name == c.name && a.frame_count == c.frame_count && a.looped == c.looped
                    });
                if !same {
                    problems.push(format!(
                        "models[{i}] ({}) has a different clip table than models[{f}]; bake all models from the same skeleton and clips",
                        describe(m)
                    ));
                }
            }
        }
    }
    problems
}

/// Texts for a `VertexAnimationBaker` with `targets` and `has_character` (a first child).
pub fn baker_warnings(
    targets: &Array<Option<Gd<VertexAnimation>>>,
    has_character: bool,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if targets.is_empty() {
        warnings.push("No targets: add a VertexAnimation to `targets` to bake into.".to_string());
    }
    // Targets with their own source_scene bake from it and need no character here.
    let needs_character = targets.is_empty()
        || targets
            .iter_shared()
            .any(|t| t.is_none_or(|t| !t.bind().has_source_scene()));
    if needs_character && !has_character {
        warnings.push(
            "No character: put the character (an instanced scene with an AnimationPlayer) under the baker as its first child."
                .to_string(),
        );
    }
    warnings
}

/// Warnings as Godot takes them.
pub fn to_packed(warnings: Vec<String>) -> PackedStringArray {
    warnings.iter().map(|w| GString::from(w.as_str())).collect()
}

/// A resource named for messages: its file, else its name, else "unsaved".
fn describe(resource: &Gd<VertexAnimation>) -> String {
    let path = resource.get_path().to_string();
    if !path.is_empty() {
        return format!("'{path}'");
    }
    let name = resource.get_name().to_string();
    if name.is_empty() {
        "unsaved".into()
    } else {
        format!("'{name}'")
    }
}
