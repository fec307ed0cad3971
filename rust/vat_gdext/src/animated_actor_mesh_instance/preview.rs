//! `AnimatedActorMeshInstance`'s editor preview (see `crowd::preview`): the grid drawn as the
//! node's own actors, each carrying every model.

use super::*;
use crate::crowd::preview;

impl AnimatedActorMeshInstance {
    /// Draws, redraws or removes the editor preview; true while one shows (the crowd clock then
    /// runs in the editor).
    pub(super) fn update_preview(&mut self) -> bool {
        // The common case, every frame of a game: nothing shown, nothing to show.
        if self.core.preview.is_none() && (self.core.preview_count <= 0 || !editor::in_editor()) {
            return false;
        }
        let name = self.base().get_name().to_string();
        // Models that cannot draw together are the configuration warnings' to report.
        let wanted = if editor::model_problems(&self.models).is_empty() {
            let models: Vec<Gd<VertexAnimation>> = self.models.iter_shared().flatten().collect();
            preview::wanted(
                &name,
                self.core.preview_count,
                &self.core.preview_clip,
                &models,
                &mut self.core.preview_error,
            )
        } else {
            None
        };
        let Some(wanted) = wanted else {
            if self.core.preview.take().is_some() {
                self.begin();
                if self.frame.get_mut().gpu.is_some() {
                    self.submit();
                }
            }
            return false;
        };
        let n = wanted.positions.len();
        if self.core.preview.as_ref() == Some(&wanted) && self.frame.get_mut().actor_count == n {
            return true;
        }
        // A change, a rebuild, or actors added by a tool script: the preview owns the node here.
        self.core.preview = None;
        self.begin();
        let models = self.models.len() as i32;
        for p in &wanted.positions {
            let at = Transform3D::new(Basis::IDENTITY, Vector3::new(p[0], p[1], p[2]));
            let no_custom = Color::from_rgba(0.0, 0.0, 0.0, 0.0);
            if self.add_actor(at, wanted.clip as i32, f64::NAN, 1.0, no_custom) < 0 {
                return false;
            }
            for m in 0..models {
                self.add_model(m, 0, Color::WHITE);
            }
        }
        self.submit();
        self.core.preview = Some(wanted);
        true
    }
}
