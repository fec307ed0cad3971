//! `AnimatedMeshInstance`'s editor preview (see `crowd::preview`): the grid drawn as the node's
//! own instances.

use super::*;
use crate::crowd::preview;

impl AnimatedMeshInstance {
    /// Draws, redraws or removes the editor preview; true while one shows (the crowd clock then
    /// runs in the editor).
    pub(super) fn update_preview(&mut self) -> bool {
        // The common case, every frame of a game: nothing shown, nothing to show.
        if self.core.preview.is_none() && (self.core.preview_count <= 0 || !editor::in_editor()) {
            return false;
        }
        let name = self.base().get_name().to_string();
        let models: Vec<Gd<VertexAnimation>> = self.animation.iter().cloned().collect();
        let wanted = preview::wanted(
            &name,
            self.core.preview_count,
            &self.core.preview_clip,
            &models,
            &mut self.core.preview_error,
        );
        let Some(wanted) = wanted else {
            if self.core.preview.take().is_some() {
                self.clear();
            }
            return false;
        };
        let n = wanted.positions.len();
        if self.core.preview.as_ref() == Some(&wanted) && self.instances.len() == n {
            return true;
        }
        // A change, or instances added by a tool script: the preview owns the node here.
        self.core.preview = None;
        self.clear();
        for p in &wanted.positions {
            let at = Transform3D::new(Basis::IDENTITY, Vector3::new(p[0], p[1], p[2]));
            if self.add_instance(at, wanted.clip as i32, Color::WHITE, 0) < 0 {
                return false;
            }
        }
        self.submit();
        self.core.preview = Some(wanted);
        true
    }
}
