//! What a crowd keeps of its models on the CPU for the crowd frame: each model's instance list
//! as the node wrote it, and the models' shape (clip bounds, LOD curve, level counts).

use godot::prelude::*;
use vat_core::bounds::Bounds;
use vat_core::crowd::{CrowdShape, MAX_LEVELS};

use crate::convert;
use crate::vertex_animation::VertexAnimation;

/// A model's instances as the node wrote them this frame (4 bytes each, the model-instance texel
/// format), before the crowd frame sorts them into its slots' lists.
#[derive(Default)]
pub struct InstanceList {
    texels: Vec<u32>,
    /// Written (and maybe changed) since [`InstanceList::take_changed`].
    changed: bool,
}

impl InstanceList {
    /// Makes room for `items` instances.
    pub fn reserve(&mut self, items: usize) {
        if self.texels.len() < items {
            let cap = vat_core::crowd::grow_capacity(self.texels.len(), items);
            self.texels.resize(cap, 0);
        }
    }

    /// The texels as bytes, to write in place (counted as a change).
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.changed = true;
        self.bytes_mut_untracked()
    }

    /// The texels as bytes, for a writer that calls [`InstanceList::mark_changed`] only if it
    /// changed them.
    pub fn bytes_mut_untracked(&mut self) -> &mut [u8] {
        let n = self.texels.len() * 4;
        // SAFETY: u8 has no alignment requirement and every bit pattern is valid for both.
        unsafe { std::slice::from_raw_parts_mut(self.texels.as_mut_ptr().cast::<u8>(), n) }
    }

    /// Says the texels changed.
    pub fn mark_changed(&mut self) {
        self.changed = true;
    }

    /// True (once) if the texels were written since the last call: the GPU frame compares a
    /// list with what it sent only then. (The CPU frame's slots compare their own lists.)
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// The first `n` texels, as `u32::from_le_bytes` of each 4 bytes.
    pub fn texels(&self, n: usize) -> &[u32] {
        &self.texels[..n.min(self.texels.len())]
    }
}

/// What the crowd frame needs of the models: per clip the union of their bounds, the first
/// model's LOD curve and diameter, and each model's level count.
pub fn crowd_shape(animations: &[Gd<VertexAnimation>]) -> CrowdShape {
    let mut clip_bounds: Vec<Bounds> = Vec::new();
    let mut model_levels = Vec::new();
    for a in animations {
        let a = a.bind();
        let whole = convert::bounds(a.get_bounds());
        let table = a._get_clip_bounds_table();
        let table = table.as_slice();
        let clips = a.get_clip_count().max(0) as usize;
        if clip_bounds.len() < clips {
            clip_bounds.resize(clips, Bounds::empty());
        }
        for (c, b) in clip_bounds.iter_mut().enumerate().take(clips) {
            let clip = table.get(c * 6..c * 6 + 6).map_or(whole, |t| Bounds {
                min: glam::Vec3::new(t[0], t[1], t[2]),
                max: glam::Vec3::new(t[3], t[4], t[5]),
            });
            *b = b.union(&clip);
        }
        model_levels.push(a.get_lod_count().clamp(1, MAX_LEVELS as i32) as u8);
    }
    let lod = animations.first().and_then(|a| {
        let a = a.bind();
        a.lod_curve().map(|c| (c, a.lod_diameter()))
    });
    CrowdShape {
        clip_bounds,
        lod,
        model_levels,
    }
}
