//! Software prefetch for the loops that visit a few actors scattered over a large crowd (the 2%
//! that switch clips in a battle frame): each visit is a cache miss, and asking for the record a
//! few entries ahead lets those misses overlap instead of queueing one after another.

/// Entries ahead of the current one whose data the scattered loops ask for.
pub(crate) const AHEAD: usize = 8;

/// Asks the CPU to bring `items[index]` into its caches, to be read or written soon. A hint only:
/// out of range does nothing, and so does a target without the instruction.
#[inline(always)]
pub(crate) fn prefetch<T>(items: &[T], index: usize) {
    if let Some(item) = items.get(index) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing the program sees and cannot fault; SSE is part of
        // every x86_64 CPU.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = item;
    }
}
