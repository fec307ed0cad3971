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
    model: i32,
    variation: i32,
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
            match self.check_model_look(setup, model, variation) {
                Ok(_) => {}
                Err(Some(why)) => return Err(format!("entry {k}: {why}")),
                Err(None) => {
                    return Err(
                        "the crowd's GPU objects could not be built (reported above)".into(),
                    )
                }
            }
            set.push(Equip {
                model,
                variation,
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
                self.attach(setup, e);
            }
            self.equipment[slot] = Some(set);
        }
        index
    }

    /// Attaches `e` to the actor added last, checked again against the models as they are now
    /// (one removed since is left off, with an error). The model and variation were checked by
    /// `set_equipment`: while they are still in range (two comparisons, on the per-actor path)
    /// the full check is skipped.
    fn attach(&mut self, setup: &Setup, e: &Equip) {
        let what = "add_equipped_actor";
        let (m, variation) = (e.model as usize, e.variation as u32);
        let in_range = self
            .variation_counts
            .get(m)
            .is_some_and(|&count| variation < count);
        if !in_range {
            if let Err(why) = self.check_model_look(setup, e.model, e.variation) {
                if let Some(why) = why {
                    godot_error!("vat_crowd: {what}: the equipment's {why}; left off");
                }
                return;
            }
        }
        match self.looks[m].index_of(e.tint, variation) {
            Ok(look) => self.push_instance(m, look, what),
            Err(err) => godot_error!("vat_crowd: {what}: {err}"),
        }
    }
}
