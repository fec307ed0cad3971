//! Crowd bookkeeping shared by both crowd nodes: bounds of what was placed, look tables.

use glam::Vec3;
use vat_core::bounds::Bounds;
use vat_core::crowd::PlacedTransforms;

/// Running bounds of actor positions and their largest scale, for culling.
#[derive(Clone, Copy)]
pub struct PlacedBounds {
    min: Vec3,
    max: Vec3,
    max_scale: f32,
    /// Some actor has a full transform (may tilt): bound the model by a sphere.
    tilted: bool,
}

impl Default for PlacedBounds {
    fn default() -> Self {
        Self {
            min: Vec3::splat(f32::INFINITY),
            max: Vec3::splat(f32::NEG_INFINITY),
            max_scale: 0.0,
            tilted: false,
        }
    }
}

impl PlacedBounds {
    /// Adds an actor at `p` with uniform `scale`, or with a full transform's `basis`.
    pub fn add_actor(&mut self, p: Vec3, scale: f32, basis: Option<[Vec3; 3]>) {
        match basis {
            Some(cols) => {
                self.add(p, vat_core::crowd::basis_stretch(cols));
                self.tilted = true;
            }
            None => self.add(p, scale),
        }
    }

    fn add(&mut self, p: Vec3, scale: f32) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
        self.max_scale = self.max_scale.max(scale);
    }

    /// Actors of scale 1 whose positions span `positions`.
    pub fn of_positions(positions: &Bounds) -> Self {
        if positions.is_empty() {
            return Self::default();
        }
        Self {
            min: positions.min,
            max: positions.max,
            max_scale: 1.0,
            tilted: false,
        }
    }

    /// The same actors (scales and tilts kept) moved so that their positions span `positions`.
    pub fn moved(&self, positions: &Bounds) -> Self {
        if positions.is_empty() {
            return Self::default();
        }
        Self {
            min: positions.min,
            max: positions.max,
            ..*self
        }
    }

    /// Actors with full transforms whose origins and stretch `placed` describes.
    pub fn of_transforms(placed: &PlacedTransforms) -> Self {
        if placed.origins.is_empty() {
            return Self::default();
        }
        Self {
            min: placed.origins.min,
            max: placed.origins.max,
            max_scale: placed.max_stretch,
            tilted: true,
        }
    }

    /// Conservative bounds of a model drawn at every placed actor, turned by any yaw.
    pub fn for_model(&self, model: &Bounds) -> Bounds {
        if self.min.x > self.max.x || model.is_empty() {
            return Bounds {
                min: Vec3::ZERO,
                max: Vec3::ZERO,
            };
        }
        let s = self.max_scale;
        if self.tilted {
            // Any rotation: a sphere through the model's farthest corner.
            let r = model.min.abs().max(model.max.abs()).length() * s;
            return Bounds {
                min: self.min - Vec3::splat(r),
                max: self.max + Vec3::splat(r),
            };
        }
        let rx = model.min.x.abs().max(model.max.x.abs());
        let rz = model.min.z.abs().max(model.max.z.abs());
        let r = (rx * rx + rz * rz).sqrt() * s;
        let lo = model.min.y.min(0.0) * s;
        let hi = model.max.y.max(0.0) * s;
        Bounds {
            min: self.min + Vec3::new(-r, lo, -r),
            max: self.max + Vec3::new(r, hi, r),
        }
    }
}
