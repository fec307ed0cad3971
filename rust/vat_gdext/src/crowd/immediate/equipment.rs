//! Equipment sets: the models an actor carries (with their variations and tints), defined once
//! with `set_equipment` and attached in the same call that adds the actor
//! (`add_equipped_actor`), so an actor with its models costs one call from a script instead of
//! one per model.

use super::*;

/// The most equipment sets a node holds (ids 0 to this minus one).
pub const MAX_EQUIPMENT: i32 = 4096;

/// One model of an equipment set, with its look.
#[derive(Clone, Copy)]
pub struct Equip {
    model: usize,
    variation: u32,
    tint: [f32; 4],
}

impl Frame {
    /// Defines (or replaces) equipment set `id`: `models`, with `variations` and `tints` per model
    /// (each empty for variation 0 and white). Checks everything first; on an error nothing
    /// changes and the error says what is wrong.
    pub fn set_equipment(
        &mut self,
        setup: &Setup,
        id: i32,
        models: &[i32],
        variations: &[i32],
        tints: &[Color],
    ) -> Result<(), String> {
        if !(0..MAX_EQUIPMENT).contains(&id) {
            return Err(format!(
                "equipment id {id} is out of range (0 to {})",
                MAX_EQUIPMENT - 1
            ));
        }
        let n = models.len();
        for (what, len) in [("variations", variations.len()), ("tints", tints.len())] {
            if len != 0 && len != n {
                return Err(format!(
                    "{len} {what} for {n} models; give one per model, or none"
                ));
            }
        }
        let mut set = Vec::with_capacity(n);
        for (k, &model) in models.iter().enumerate() {
            let variation = variations.get(k).copied().unwrap_or(0);
            let tint = tints.get(k).copied().unwrap_or(Color::WHITE);
            let rgba = convert::rgba(tint);
            if !rgba.iter().all(|c| c.is_finite()) {
                return Err(format!("tint {k} ({rgba:?}) is not finite"));
            }
            // Reports a model or variation out of range itself.
            if self
                .model_for_look(setup, model, variation, "set_equipment")
                .is_none()
            {
                return Err(format!(
                    "entry {k} (model {model}, variation {variation}) refused"
                ));
            }
            set.push(Equip {
                model: model as usize,
                variation: variation as u32,
                tint: rgba,
            });
        }
        let id = id as usize;
        if self.equipment.len() <= id {
            self.equipment.resize(id + 1, None);
        }
        self.equipment[id] = Some(set);
        Ok(())
    }

    /// Forgets every equipment set.
    pub fn clear_equipment(&mut self) {
        self.equipment.clear();
    }

    /// Adds an actor (as [`Frame::add_actor`]) carrying the models of equipment set `id`;
    /// returns its index, or -1 after reporting why not (an unknown set adds no actor).
    pub fn add_equipped_actor(&mut self, setup: &Setup, id: i32, actor: NewActor) -> i32 {
        let slot = usize::try_from(id)
            .ok()
            .filter(|&i| self.equipment.get(i).is_some_and(Option::is_some));
        let Some(slot) = slot else {
            godot_error!(
                "vat_crowd: add_equipped_actor: equipment {id} was not set (set_equipment); \
                 actor skipped"
            );
            return -1;
        };
        let index = self.add_actor(setup, actor);
        if index >= 0 {
            // Moved out for the loop (no copy) so the frame can be borrowed meanwhile.
            let set = self.equipment[slot].take().expect("checked");
            for e in &set {
                self.attach(e);
            }
            self.equipment[slot] = Some(set);
        }
        index
    }

    /// Attaches `e` to the actor added last: the checks `set_equipment` made, again only where
    /// the models may have changed since (a model or variation gone).
    fn attach(&mut self, e: &Equip) {
        let what = "add_equipped_actor";
        if e.model >= self.model_counts.len() || e.variation >= self.variation_counts[e.model] {
            godot_error!(
                "vat_crowd: {what}: the equipment's model {} (variation {}) no longer exists; \
                 left off",
                e.model,
                e.variation
            );
            return;
        }
        match self.looks[e.model].index_of(e.tint, e.variation) {
            Ok(look) => self.push_instance(e.model, look, what),
            Err(err) => godot_error!("vat_crowd: {what}: {err}"),
        }
    }
}
