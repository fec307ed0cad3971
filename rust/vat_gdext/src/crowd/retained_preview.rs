//! `AnimatedMeshInstance`'s editor preview (see `crowd::preview`): the grid drawn as the node's
//! own instances. A child module of the node's file (see its `#[path]`).

use super::*;
use crate::crowd::preview;

impl AnimatedMeshInstance {
    /// Draws, redraws or removes the editor preview; true while one shows (the crowd clock then
    /// runs in the editor).
    pub(super) fn update_preview(&mut self) -> bool {
        // The common case, every frame of a game: nothing shown, nothing to show.
        if self.preview.is_none() && (self.preview_count <= 0 || !editor::in_editor()) {
            return false;
        }
        let name = self.base().get_name().to_string();
        let models: Vec<Gd<VertexAnimation>> = self.animation.iter().cloned().collect();
        let wanted = preview::wanted(
            &name,
            self.preview_count,
            &self.preview_clip,
            &models,
            &mut self.preview_error,
        );
        let Some(wanted) = wanted else {
            if self.preview.take().is_some() {
                self.clear();
            }
            return false;
        };
        let n = wanted.positions.len();
        if self.preview.as_ref() == Some(&wanted) && self.instances.len() == n {
            return true;
        }
        // A change, or instances added by a tool script: the preview owns the node here.
        self.preview = None;
        self.clear();
        for p in &wanted.positions {
            let at = Transform3D::new(Basis::IDENTITY, Vector3::new(p[0], p[1], p[2]));
            if self.add_instance(at, wanted.clip as i32, Color::WHITE, 0) < 0 {
                return false;
            }
        }
        self.submit();
        self.preview = Some(wanted);
        true
    }
}
