//! Stable ids over a dense array, for retained crowds.
//!
//! Items live contiguously, in the order they are drawn, so a submit walks one slice. Removing an
//! item moves the last one into its slot, and every id keeps naming its own item; a removed id
//! is reused by a later insert, never while its item lives. The table also records which slots
//! were written since [`IdSlots::take_changes`], so a submit can re-pack only those.

/// Items addressed by stable ids, stored densely (see the module docs).
#[derive(Debug, Clone)]
pub struct IdSlots<T> {
    items: Vec<T>,
    /// The id of the item in each slot.
    slot_ids: Vec<u32>,
    /// The slot of each id ever handed out; `None` once removed.
    id_slots: Vec<Option<u32>>,
    /// Removed ids, reused last-in first-out.
    free_ids: Vec<u32>,
    /// Slots written since the last [`IdSlots::take_changes`] (may repeat).
    changed: Vec<u32>,
    /// Every slot counts as written.
    all_changed: bool,
}

/// Which slots changed since the last [`IdSlots::take_changes`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// Every slot (or too many to list).
    All,
    /// These slots, each once, ascending; all below the current length.
    Slots(Vec<u32>),
}

impl<T> Default for IdSlots<T> {
    fn default() -> Self {
        Self {
            items: Vec::new(),
            slot_ids: Vec::new(),
            id_slots: Vec::new(),
            free_ids: Vec::new(),
            changed: Vec::new(),
            all_changed: true,
        }
    }
}

impl<T> IdSlots<T> {
    /// Live items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True if no item lives.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds `item` under a removed id if there is one, else a fresh one; returns the id.
    pub fn insert(&mut self, item: T) -> u32 {
        match self.free_ids.pop() {
            Some(id) => {
                self.mark(self.items.len());
                self.id_slots[id as usize] = Some(self.items.len() as u32);
                self.items.push(item);
                self.slot_ids.push(id);
                id
            }
            None => self.insert_fresh(item),
        }
    }

    /// Adds `item` under an id never handed out before (so a run of these gets consecutive
    /// ids, starting at [`IdSlots::next_fresh_id`]); returns the id.
    pub fn insert_fresh(&mut self, item: T) -> u32 {
        let id = self.id_slots.len() as u32;
        self.mark(self.items.len());
        self.id_slots.push(Some(self.items.len() as u32));
        self.items.push(item);
        self.slot_ids.push(id);
        id
    }

    /// The id the next [`IdSlots::insert_fresh`] returns.
    pub fn next_fresh_id(&self) -> u32 {
        self.id_slots.len() as u32
    }

    /// The slot of a live `id` (negative ids are never live).
    pub fn slot(&self, id: i64) -> Option<usize> {
        let id = usize::try_from(id).ok()?;
        self.id_slots.get(id).copied().flatten().map(|s| s as usize)
    }

    /// The item of a live `id`, to change (its slot counts as written).
    pub fn get_mut(&mut self, id: i64) -> Option<&mut T> {
        let slot = self.slot(id)?;
        Some(self.slot_mut(slot))
    }

    /// The item in `slot`, to change (the slot counts as written). Panics if `slot >= len()`.
    pub fn slot_mut(&mut self, slot: usize) -> &mut T {
        self.mark(slot);
        &mut self.items[slot]
    }

    /// Counts every slot as written (e.g. after what they are packed into was lost).
    pub fn mark_all(&mut self) {
        self.all_changed = true;
        self.changed.clear();
    }

    /// The slots written since the last call, then forgets them.
    pub fn take_changes(&mut self) -> Changes {
        let len = self.items.len() as u32;
        let changes = if self.all_changed {
            Changes::All
        } else {
            let mut slots = std::mem::take(&mut self.changed);
            slots.retain(|&s| s < len);
            slots.sort_unstable();
            slots.dedup();
            Changes::Slots(slots)
        };
        self.all_changed = false;
        self.changed.clear();
        changes
    }

    fn mark(&mut self, slot: usize) {
        if !self.all_changed {
            self.changed.push(slot as u32);
            // Past one entry per item a full pass is cheaper than the list.
            if self.changed.len() > self.items.len().max(64) {
                self.mark_all();
            }
        }
    }

    /// Removes a live `id`'s item and returns it; the last item moves into its slot.
    pub fn remove(&mut self, id: i64) -> Option<T> {
        let slot = self.slot(id)?;
        let item = self.items.swap_remove(slot);
        let removed = self.slot_ids.swap_remove(slot);
        if let Some(&moved) = self.slot_ids.get(slot) {
            self.id_slots[moved as usize] = Some(slot as u32);
            self.mark(slot);
        }
        self.id_slots[removed as usize] = None;
        self.free_ids.push(removed);
        Some(item)
    }

    /// Removes every item and forgets every id (the next id is 0 again).
    pub fn clear(&mut self) {
        self.items.clear();
        self.slot_ids.clear();
        self.id_slots.clear();
        self.free_ids.clear();
        self.mark_all();
    }

    /// The items in slot order.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// The id of the item in `slot`. Panics if `slot >= len()`.
    pub fn id_at(&self, slot: usize) -> u32 {
        self.slot_ids[slot]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every live id names the item it was given, and the items are dense.
    fn check_consistent(s: &IdSlots<u32>, live: &[u32]) {
        assert_eq!(s.len(), live.len());
        for &id in live {
            let slot = s.slot(i64::from(id)).expect("live id");
            assert_eq!(s.items()[slot], id * 10, "id {id}");
            assert_eq!(s.id_at(slot), id);
        }
    }

    #[test]
    fn ids_survive_removals_and_are_reused() {
        let mut s = IdSlots::default();
        for i in 0..5 {
            assert_eq!(s.insert(i * 10), i);
        }
        assert_eq!(s.remove(1), Some(10));
        // The last item (id 4) moved into slot 1.
        assert_eq!(s.slot(4), Some(1));
        assert_eq!(s.remove(1), None, "a removed id is gone");
        assert_eq!(s.remove(4), Some(40)); // now the moved item
        check_consistent(&s, &[0, 2, 3]);
        // Reuse last-freed first; fresh ids continue after the highest ever given.
        assert_eq!(s.insert(40), 4);
        assert_eq!(s.insert(10), 1);
        assert_eq!(s.next_fresh_id(), 5);
        assert_eq!(s.insert_fresh(50), 5);
        check_consistent(&s, &[0, 1, 2, 3, 4, 5]);
        assert_eq!((s.slot(-1), s.slot(6), s.get_mut(99)), (None, None, None));
        *s.get_mut(2).unwrap() = 20;
        // Removing the last slot moves nothing.
        let last = s.id_at(s.len() - 1);
        s.remove(i64::from(last));
        let rest: Vec<u32> = (0..6).filter(|&x| x != last).collect();
        check_consistent(&s, &rest);
        s.clear();
        assert!(s.is_empty());
        assert_eq!((s.slot(0), s.insert(7)), (None, 0));
    }

    #[test]
    fn changes_name_the_written_slots() {
        let mut s = IdSlots::default();
        assert_eq!(
            s.take_changes(),
            Changes::All,
            "a new table has nothing packed yet"
        );
        for i in 0..4 {
            s.insert(i * 10);
        }
        assert_eq!(s.take_changes(), Changes::Slots(vec![0, 1, 2, 3]));
        assert_eq!(s.take_changes(), Changes::Slots(vec![]));
        *s.get_mut(2).unwrap() = 20;
        *s.slot_mut(2) = 20;
        s.remove(0); // id 3 moves into slot 0
        s.insert(40); // id 0 again, slot 3
        assert_eq!(s.take_changes(), Changes::Slots(vec![0, 2, 3]));
        s.remove(i64::from(s.id_at(s.len() - 1))); // the last slot: nothing moves
        assert_eq!(s.take_changes(), Changes::Slots(vec![]));
        *s.get_mut(1).unwrap() = 10;
        s.remove(i64::from(s.id_at(s.len() - 1)));
        s.remove(1); // slot 1 written, then gone with the shrink
        assert_eq!(s.take_changes(), Changes::Slots(vec![]));
        s.mark_all();
        assert_eq!(s.take_changes(), Changes::All);
        // Many writes: a full pass.
        for _ in 0..200 {
            *s.slot_mut(0) = 0;
        }
        assert_eq!(s.take_changes(), Changes::All);
        s.clear();
        assert_eq!(s.take_changes(), Changes::All);
    }

    #[test]
    fn random_operations_stay_consistent() {
        let mut s = IdSlots::default();
        let mut live: Vec<u32> = Vec::new();
        let mut x = 12345u32;
        for _ in 0..5_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            if x.is_multiple_of(3) && !live.is_empty() {
                let id = live.swap_remove((x as usize / 3) % live.len());
                assert_eq!(s.remove(i64::from(id)), Some(id * 10));
            } else {
                let got = if x.is_multiple_of(2) {
                    s.insert(0)
                } else {
                    s.insert_fresh(0)
                };
                *s.get_mut(i64::from(got)).unwrap() = got * 10;
                live.push(got);
            }
        }
        check_consistent(&s, &live);
    }
}
