//! Stable, generation-tagged ids over a dense array, for retained crowds.
//!
//! Items live contiguously, in the order they are drawn, so a submit walks one slice. Removing an
//! item moves the last one into its slot, and every id keeps naming its own item. An id is
//! `generation << INDEX_BITS | index`: when an item goes ([`IdSlots::remove`], [`IdSlots::clear`])
//! its index may be handed out again, but with a newer generation, so the old id is refused
//! rather than reaching someone else's item. Generations have [`GENERATION_BITS`] bits (ids stay
//! positive i32 for GDScript): an index whose generation is used up is retired, and after
//! [`MAX_GENERATION`] + 1 clears the clear generation wraps, so an id could come back only after
//! 128 clears. The table also records which slots were written since [`IdSlots::take_changes`],
//! so a submit can re-pack only those.

/// Bits of an id that hold the index (the rest hold the generation).
pub const INDEX_BITS: u32 = 24;
/// Bits of an id that hold the generation: ids stay below 2^31.
pub const GENERATION_BITS: u32 = 7;
/// Indices a table can hand out (the highest index is `MAX_INDICES - 1`).
pub const MAX_INDICES: u32 = 1 << INDEX_BITS;
/// The highest generation.
pub const MAX_GENERATION: u8 = (1 << GENERATION_BITS) - 1;
const INDEX_MASK: u32 = MAX_INDICES - 1;
/// An index whose generations are used up: no id names it again.
const RETIRED: u8 = u8::MAX;

/// What the table knows of one index.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The slot of its live item; `None` while free.
    slot: Option<u32>,
    /// The generation its current (or next) id carries, or [`RETIRED`].
    generation: u8,
}

/// Items addressed by stable ids, stored densely (see the module docs).
#[derive(Debug, Clone)]
pub struct IdSlots<T> {
    items: Vec<T>,
    /// The id of the item in each slot.
    slot_ids: Vec<u32>,
    /// Every index handed out since the last clear.
    entries: Vec<Entry>,
    /// Free indices, reused last-in first-out.
    free: Vec<u32>,
    /// The generation of indices handed out fresh since the last clear.
    fresh_generation: u8,
    /// The highest generation any id has carried since the clear generation last wrapped.
    highest_generation: u8,
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
            entries: Vec::new(),
            free: Vec::new(),
            fresh_generation: 0,
            highest_generation: 0,
            changed: Vec::new(),
            all_changed: true,
        }
    }
}

fn make_id(index: u32, generation: u8) -> u32 {
    u32::from(generation) << INDEX_BITS | index
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

    /// Adds `item` under a freed index if there is one (with a newer generation than its last
    /// id), else a fresh one; returns the id, or `None` when all [`MAX_INDICES`] are in use or
    /// retired.
    pub fn insert(&mut self, item: T) -> Option<u32> {
        match self.free.pop() {
            Some(index) => {
                let slot = self.items.len() as u32;
                self.mark(slot as usize);
                let entry = &mut self.entries[index as usize];
                entry.slot = Some(slot);
                let id = make_id(index, entry.generation);
                self.items.push(item);
                self.slot_ids.push(id);
                Some(id)
            }
            None => self.insert_fresh(item),
        }
    }

    /// Adds `item` under an index never handed out since the last clear (so a run of these gets
    /// consecutive ids, starting at [`IdSlots::next_fresh_id`]); returns the id, or `None` when
    /// the indices are used up.
    pub fn insert_fresh(&mut self, item: T) -> Option<u32> {
        let index = self.entries.len() as u32;
        if index >= MAX_INDICES {
            return None;
        }
        let slot = self.items.len() as u32;
        self.mark(slot as usize);
        self.entries.push(Entry {
            slot: Some(slot),
            generation: self.fresh_generation,
        });
        let id = make_id(index, self.fresh_generation);
        self.items.push(item);
        self.slot_ids.push(id);
        Some(id)
    }

    /// The id the next [`IdSlots::insert_fresh`] returns (if indices remain).
    pub fn next_fresh_id(&self) -> u32 {
        make_id(self.entries.len() as u32, self.fresh_generation)
    }

    /// Fresh indices left: how many [`IdSlots::insert_fresh`] calls can still succeed.
    pub fn fresh_left(&self) -> usize {
        (MAX_INDICES as usize).saturating_sub(self.entries.len())
    }

    /// The slot of a live `id` (negative ids, ids of removed items and ids from before a clear
    /// are never live).
    pub fn slot(&self, id: i64) -> Option<usize> {
        let id = u32::try_from(id).ok()?;
        let generation = u8::try_from(id >> INDEX_BITS).ok()?;
        let entry = self.entries.get((id & INDEX_MASK) as usize)?;
        if entry.generation != generation {
            return None;
        }
        entry.slot.map(|s| s as usize)
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

    /// Removes a live `id`'s item and returns it; the last item moves into its slot, and the id
    /// is never live again (its index comes back with a newer generation, or is retired).
    pub fn remove(&mut self, id: i64) -> Option<T> {
        let slot = self.slot(id)?;
        let item = self.items.swap_remove(slot);
        let removed = self.slot_ids.swap_remove(slot);
        if let Some(&moved) = self.slot_ids.get(slot) {
            self.entries[(moved & INDEX_MASK) as usize].slot = Some(slot as u32);
            self.mark(slot);
        }
        let index = removed & INDEX_MASK;
        let entry = &mut self.entries[index as usize];
        entry.slot = None;
        if entry.generation < MAX_GENERATION {
            entry.generation += 1;
            self.highest_generation = self.highest_generation.max(entry.generation);
            self.free.push(index);
        } else {
            entry.generation = RETIRED;
        }
        Some(item)
    }

    /// Removes every item. Indices start from 0 again, under a generation newer than any id
    /// handed out before (until generations wrap, see the module docs), so old ids are refused.
    pub fn clear(&mut self) {
        self.items.clear();
        self.slot_ids.clear();
        self.entries.clear();
        self.free.clear();
        if self.highest_generation < MAX_GENERATION {
            self.highest_generation += 1;
        } else {
            self.highest_generation = 0;
        }
        self.fresh_generation = self.highest_generation;
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

    const G1: u32 = 1 << INDEX_BITS;

    /// Every live id names the item it was given (items hold their own id), and the items are
    /// dense.
    fn check_consistent(s: &IdSlots<u32>, live: &[u32]) {
        assert_eq!(s.len(), live.len());
        for &id in live {
            let slot = s.slot(i64::from(id)).expect("live id");
            assert_eq!(s.items()[slot], id, "id {id}");
            assert_eq!(s.id_at(slot), id);
        }
    }

    /// Inserts an item holding its own id.
    fn add(s: &mut IdSlots<u32>, fresh: bool) -> u32 {
        let id = if fresh {
            s.next_fresh_id()
        } else {
            s.next_id()
        };
        let got = if fresh {
            s.insert_fresh(id)
        } else {
            s.insert(id)
        };
        assert_eq!(got, Some(id));
        id
    }

    impl IdSlots<u32> {
        /// The id the next `insert` returns.
        fn next_id(&self) -> u32 {
            match self.free.last() {
                Some(&i) => make_id(i, self.entries[i as usize].generation),
                None => self.next_fresh_id(),
            }
        }
    }

    #[test]
    fn ids_survive_removals_and_reused_slots_get_new_ids() {
        let mut s = IdSlots::default();
        for i in 0..5 {
            assert_eq!(add(&mut s, false), i);
        }
        assert_eq!(s.remove(1), Some(1));
        // The last item (id 4) moved into slot 1.
        assert_eq!(s.slot(4), Some(1));
        assert_eq!(s.remove(1), None, "a removed id is gone");
        assert_eq!(s.remove(4), Some(4)); // now the moved item
        check_consistent(&s, &[0, 2, 3]);
        // Freed indices come back last-freed first, each under its next generation; fresh ids
        // continue after the highest index ever given.
        assert_eq!(add(&mut s, false), G1 | 4);
        assert_eq!(add(&mut s, false), G1 | 1);
        assert_eq!(s.next_fresh_id(), 5);
        assert_eq!(add(&mut s, true), 5);
        check_consistent(&s, &[0, G1 | 1, 2, 3, G1 | 4, 5]);
        // The old ids of reused indices name nobody.
        assert_eq!(
            (s.slot(1), s.slot(4), s.remove(1), s.get_mut(4)),
            (None, None, None, None)
        );
        assert_eq!((s.slot(-1), s.slot(6), s.get_mut(99)), (None, None, None));
        // Removing the last slot moves nothing.
        let last = s.id_at(s.len() - 1);
        s.remove(i64::from(last));
        let rest: Vec<u32> = [0, G1 | 1, 2, 3, G1 | 4, 5]
            .into_iter()
            .filter(|&x| x != last)
            .collect();
        check_consistent(&s, &rest);
    }

    #[test]
    fn ids_from_before_a_clear_are_refused() {
        let mut s = IdSlots::default();
        let old: Vec<u32> = (0..3).map(|_| add(&mut s, false)).collect();
        s.clear();
        assert!(s.is_empty());
        // Fresh ids after a clear are consecutive again, under a new generation.
        let first = s.next_fresh_id();
        assert_eq!(first, G1);
        let new: Vec<u32> = (0..3).map(|_| add(&mut s, true)).collect();
        assert_eq!(new, vec![G1, G1 | 1, G1 | 2]);
        for id in old {
            assert_eq!(s.slot(i64::from(id)), None, "old id {id}");
        }
        // An index reused up to generation 5 before a clear: the clear goes past it.
        let mut reused = new[0];
        for _ in 0..4 {
            s.remove(i64::from(reused));
            reused = add(&mut s, false);
        }
        assert_eq!(reused >> INDEX_BITS, 5);
        s.clear();
        assert_eq!(s.next_fresh_id() >> INDEX_BITS, 6);
        add(&mut s, true);
        assert_eq!(s.slot(i64::from(reused)), None);
    }

    #[test]
    fn an_index_whose_generations_are_used_up_is_retired() {
        let mut s = IdSlots::default();
        let mut id = add(&mut s, false);
        for g in 1..=u32::from(MAX_GENERATION) {
            s.remove(i64::from(id));
            id = add(&mut s, false);
            assert_eq!(
                id,
                g << INDEX_BITS,
                "index 0 comes back with generation {g}"
            );
        }
        s.remove(i64::from(id));
        // Index 0 would wrap to generation 0 (the first id): retired instead.
        assert_eq!(add(&mut s, false), 1);
        for g in 0..=u32::from(MAX_GENERATION) {
            assert_eq!(s.slot(i64::from(g << INDEX_BITS)), None);
        }
        assert!(
            make_id(MAX_INDICES - 1, MAX_GENERATION) < 1 << 31,
            "ids fit an i32"
        );
    }

    #[test]
    fn changes_name_the_written_slots() {
        let mut s = IdSlots::default();
        assert_eq!(
            s.take_changes(),
            Changes::All,
            "a new table has nothing packed yet"
        );
        for _ in 0..4 {
            add(&mut s, false);
        }
        assert_eq!(s.take_changes(), Changes::Slots(vec![0, 1, 2, 3]));
        assert_eq!(s.take_changes(), Changes::Slots(vec![]));
        *s.get_mut(2).unwrap() = 2;
        *s.slot_mut(2) = 2;
        s.remove(0); // id 3 moves into slot 0
        add(&mut s, false); // index 0 again, slot 3
        assert_eq!(s.take_changes(), Changes::Slots(vec![0, 2, 3]));
        s.remove(i64::from(s.id_at(s.len() - 1))); // the last slot: nothing moves
        assert_eq!(s.take_changes(), Changes::Slots(vec![]));
        *s.get_mut(1).unwrap() = 1;
        s.remove(i64::from(s.id_at(s.len() - 1)));
        s.remove(1); // slot 1 written, then gone with the shrink
        assert_eq!(s.take_changes(), Changes::Slots(vec![]));
        s.mark_all();
        assert_eq!(s.take_changes(), Changes::All);
        // Many writes: a full pass.
        for _ in 0..200 {
            *s.slot_mut(0) = s.id_at(0);
        }
        assert_eq!(s.take_changes(), Changes::All);
        s.clear();
        assert_eq!(s.take_changes(), Changes::All);
    }

    #[test]
    fn random_operations_stay_consistent() {
        let mut s = IdSlots::default();
        let mut live: Vec<u32> = Vec::new();
        let mut dead: Vec<u32> = Vec::new();
        let mut x = 12345u32;
        for _ in 0..5_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            if x.is_multiple_of(3) && !live.is_empty() {
                let id = live.swap_remove((x as usize / 3) % live.len());
                assert_eq!(s.remove(i64::from(id)), Some(id));
                dead.push(id);
            } else {
                live.push(add(&mut s, x.is_multiple_of(2)));
            }
        }
        check_consistent(&s, &live);
        for id in dead {
            assert_eq!(s.slot(i64::from(id)), None, "removed id {id}");
        }
    }
}
