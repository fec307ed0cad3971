//! Simplifying a remesh surface to a triangle target while it stays closed and manifold, and
//! what the targets of one surface share.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use glam::Vec3;

use super::{collapse, manifold, surface};
use super::{BONE_WEIGHT, COLLAPSE_BONE_WEIGHT};
use crate::bounds::Bounds;
use crate::error::{Result, VatError};

/// `mesh` simplified to at most `target` triangles, closed and manifold, and for each of its
/// vertices the index of that vertex in `mesh`.
///
/// meshoptimizer first. It keeps a closed mesh closed but may pinch a thin tube into an edge
/// shared by four triangles, or flatten a small piece into two triangles on the same three
/// vertices; then it simplifies only to a looser target where it does not, and
/// the manifold-safe edge collapses of [`collapse`] take the rest (from the full surface if no
/// looser target works). `centres` are the vertices' bone centres (see [`bone_centres`]);
/// `in_poses` gives the listed vertices' positions in each pose the collapses weigh.
#[cfg(test)]
pub(super) fn simplify_closed(
    mesh: &surface::Mesh,
    centres: &[Vec3],
    in_poses: impl Fn(&[u32]) -> Vec<Vec<Vec3>> + Sync,
    target: usize,
) -> Result<(surface::Mesh, Vec<u32>)> {
    simplify_closed_with(mesh, centres, in_poses, target, None)
}

/// [`simplify_closed`], sharing work between the targets of one `mesh` through `shared`:
/// meshoptimizer's result per goal, and the collapses from the whole of `mesh` (run once for
/// all of `shared`'s targets).
pub(super) fn simplify_closed_with(
    mesh: &surface::Mesh,
    centres: &[Vec3],
    in_poses: impl Fn(&[u32]) -> Vec<Vec<Vec3>> + Sync,
    target: usize,
    shared: Option<&Shared>,
) -> Result<(surface::Mesh, Vec<u32>)> {
    if mesh.indices.len() / 3 <= target {
        return Ok((mesh.clone(), (0..mesh.positions.len() as u32).collect()));
    }
    let bounds = Bounds::from_points(&mesh.positions);
    let scale = 1.0
        / (bounds.max - bounds.min)
            .max_element()
            .max(f32::MIN_POSITIVE);
    let attributes: Vec<f32> = centres
        .iter()
        .flat_map(|c| (*c * scale).to_array())
        .collect();
    let locks = vec![false; mesh.positions.len()];
    // meshoptimizer may collapse a whole small component away; every piece must stay.
    let component = components(mesh);
    let count = component.iter().max().map_or(0, |&c| c as usize + 1);
    let closed = |indices: &[u32]| {
        let mut kept = vec![false; count];
        for &v in indices {
            kept[component[v as usize] as usize] = true;
        }
        !indices.is_empty()
            && kept.iter().all(|&k| k)
            && manifold::bad_edges(indices).is_empty()
            && !manifold::has_doubled_triangles(indices)
    };
    let simplified = |factor: f32| {
        let goal = (target as f32 * factor) as usize;
        let run = || surface::simplify(mesh, goal, &attributes, BONE_WEIGHT, &locks);
        match shared {
            Some(shared) => shared.simplified(goal, run),
            None => run(),
        }
    };
    // Two goals at a time (in parallel; the second is built in vain only when the first
    // passes), looked at in order: the first closed result, compacted.
    let search = || {
        let mut results = GOAL_FACTORS.chunks(2).flat_map(|pair| match *pair {
            [a, b] => {
                let (a, b) = rayon::join(|| simplified(a), || simplified(b));
                vec![a, b]
            }
            _ => pair.iter().map(|&f| simplified(f)).collect(),
        });
        results
            .find(|indices| closed(indices))
            .map(|indices| surface::compact_mapped(&mesh.positions, &indices))
    };
    let identity = || (0..mesh.positions.len() as u32).collect::<Vec<u32>>();
    let collapse_whole = |whole: &Shared, stop: &AtomicBool| {
        collapse::collapse_to_targets_unless(
            mesh,
            centres,
            COLLAPSE_BONE_WEIGHT,
            &in_poses(&identity()),
            &whole.targets,
            stop,
        )
    };
    // When no goal works, the collapses from the whole surface are next: a thread with nothing
    // else to do starts them while the goals are tried, and gives them up as soon as a goal
    // works; the thread that tries the goals runs them after only when none did.
    let start = match shared.filter(|w| w.targets.contains(&target) && w.whole.get().is_none()) {
        Some(whole) => {
            let found = AtomicBool::new(false);
            let (start, ()) = rayon::join(
                || {
                    let start = search();
                    found.store(start.is_some(), Ordering::Relaxed);
                    start
                },
                || {
                    if let Some(done) = collapse_whole(whole, &found) {
                        // Kept only when whole: a run given up leaves nothing behind.
                        let _ = whole.whole.set(done);
                    }
                },
            );
            start
        }
        None => search(),
    };
    let start = match start {
        Some((m, old)) if m.indices.len() / 3 <= target => return Ok((m, old)),
        other => other,
    };
    let whole = shared.filter(|w| start.is_none() && w.targets.contains(&target));
    let (from, old) =
        start.unwrap_or_else(|| (mesh.clone(), (0..mesh.positions.len() as u32).collect()));
    let (out, kept) = match whole {
        // `from` is the whole of `mesh` here.
        Some(whole) => whole.get(target, || {
            collapse_whole(whole, &AtomicBool::new(false)).expect("never stopped")
        }),
        None => {
            let from_centres: Vec<Vec3> = old.iter().map(|&v| centres[v as usize]).collect();
            collapse::collapse_to_mapped(
                &from,
                &from_centres,
                COLLAPSE_BONE_WEIGHT,
                &in_poses(&old),
                target,
            )
        }
    };
    let count = out.indices.len() / 3;
    if count > target {
        return Err(VatError::InvalidValue {
            what: "LOD2 remesh",
            detail: format!(
                "the voxel surface simplifies to no fewer than {count} closed, manifold \
                 triangles, above the target of {target}; raise the target or the voxel size"
            ),
        });
    }
    if !manifold::indices_closed_manifold(&out.indices, out.positions.len())
        || manifold::has_doubled_triangles(&out.indices)
    {
        return Err(VatError::InvalidValue {
            what: "LOD2 remesh",
            detail: format!(
                "simplifying to {target} triangles left a mesh that is not closed and manifold"
            ),
        });
    }
    let old = kept.iter().map(|&k| old[k as usize]).collect();
    Ok((out, old))
}

/// meshoptimizer's goals, as multiples of the target, tried in turn until one keeps the mesh
/// closed and manifold.
const GOAL_FACTORS: [f32; 7] = [1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0];

/// Per vertex of `mesh`, its connected component (through triangles), numbered from 0.
pub(super) fn components(mesh: &surface::Mesh) -> Vec<u32> {
    let mut parent: Vec<u32> = (0..mesh.positions.len() as u32).collect();
    for t in mesh.indices.chunks_exact(3) {
        crate::lod_mesh::weld::union(&mut parent, t[0], t[1]);
        crate::lod_mesh::weld::union(&mut parent, t[0], t[2]);
    }
    let mut number = std::collections::HashMap::new();
    (0..mesh.positions.len() as u32)
        .map(|v| {
            let root = crate::lod_mesh::weld::find(&mut parent, v);
            let next = number.len() as u32;
            *number.entry(root).or_insert(next)
        })
        .collect()
}

/// What the targets of one remesh share: meshoptimizer's result per goal (the goals of
/// different targets overlap), and the manifold-safe collapses from its whole surface, run once
/// to every target (see [`collapse::collapse_to_targets`]).
pub(super) struct Shared {
    targets: Vec<usize>,
    whole: OnceLock<Vec<(surface::Mesh, Vec<u32>)>>,
    goals: Mutex<HashMap<usize, Vec<u32>>>,
}

impl Shared {
    pub(super) fn new(targets: &[usize]) -> Self {
        Self {
            targets: targets.to_vec(),
            whole: OnceLock::new(),
            goals: Mutex::default(),
        }
    }

    /// meshoptimizer's indices at `goal`, from `run` the first time.
    fn simplified(&self, goal: usize, run: impl FnOnce() -> Vec<u32>) -> Vec<u32> {
        if let Some(known) = self.goals.lock().expect("not poisoned").get(&goal) {
            return known.clone();
        }
        let indices = run();
        self.goals
            .lock()
            .expect("not poisoned")
            .insert(goal, indices.clone());
        indices
    }

    /// The collapses' result at `target` (one of the targets), running every target with `run`
    /// the first time.
    fn get(
        &self,
        target: usize,
        run: impl FnOnce() -> Vec<(surface::Mesh, Vec<u32>)>,
    ) -> (surface::Mesh, Vec<u32>) {
        let k = self
            .targets
            .iter()
            .position(|&t| t == target)
            .expect("a target of this remesh");
        self.whole.get_or_init(run)[k].clone()
    }
}
