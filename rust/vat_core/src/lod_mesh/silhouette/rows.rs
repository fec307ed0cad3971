//! Silhouette masks as bit rows: one `u128` per row of [`SILHOUETTE_SIZE`] pixels, pixel `x`
//! at bit `x`. The check fills, floods, dilates and counts whole rows at a time; every step
//! gives exactly the pixels a per-pixel loop gives (the tests compare them with one).

use glam::Vec2;

use super::SILHOUETTE_SIZE;

/// Pixels per row and rows per mask.
const SIZE: usize = SILHOUETTE_SIZE as usize;
const _: () = assert!(SIZE >= 1 && SIZE <= 128, "a row must fit one u128");

/// The bits of one row's pixels.
const FULL: u128 = if SIZE == 128 {
    u128::MAX
} else {
    (1u128 << SIZE) - 1
};

/// One mask: row `y` (from the top) holds pixel `x` at bit `x`.
pub(crate) type Rows = [u128; SIZE];

/// An empty mask.
pub(crate) const EMPTY: Rows = [0; SIZE];

/// Whether pixel (`x`, `y`) is set; false outside the mask.
pub(crate) fn get(rows: &Rows, x: i64, y: i64) -> bool {
    (0..SIZE as i64).contains(&x) && (0..SIZE as i64).contains(&y) && rows[y as usize] >> x & 1 != 0
}

/// Set pixels in all rows.
pub(crate) fn count(rows: &Rows) -> u32 {
    rows.iter().map(|r| r.count_ones()).sum()
}

/// The mask as bytes, row by row: 255 set, 0 empty.
pub(crate) fn to_bytes(rows: &Rows) -> Vec<u8> {
    rows.iter()
        .flat_map(|r| (0..SIZE).map(move |x| if r >> x & 1 != 0 { 255 } else { 0 }))
        .collect()
}

/// A square byte mask `size` pixels wide (row by row, non-zero set) as rows, in the top-left
/// corner of an empty mask: counts, floods and dilations inside it come out as in a mask of its
/// own size, since the empty pixels around it reach the border. Panics if `size` is larger than
/// [`SILHOUETTE_SIZE`] or `mask` is shorter than `size * size`.
#[cfg(test)]
pub(crate) fn from_bytes(mask: &[u8], size: usize) -> Rows {
    assert!(
        size <= SIZE,
        "a mask of {size} pixels is larger than {SIZE}"
    );
    let mut rows = EMPTY;
    for (y, row) in rows.iter_mut().enumerate().take(size) {
        for x in 0..size {
            *row |= u128::from(mask[y * size + x] != 0) << x;
        }
    }
    rows
}

/// Sets every pixel whose centre lies in triangle `p` (pixel coordinates, either winding): a
/// centre is in when it is on the inner side of (or on) all three edges.
///
/// Along a row, each edge's test is monotone (its expression only grows or only shrinks with
/// the centre's x, rounding included: `x` enters once, through a subtraction and a product), so
/// each edge lets through a prefix or a suffix of the row and the triangle a run. Each edge's
/// end of the run is found by stepping from where the edge crosses the row, testing with the
/// same expression a per-pixel loop evaluates; the run is set at once.
pub(crate) fn fill_triangle(rows: &mut Rows, p: [Vec2; 3]) {
    let size = SIZE as i32;
    let lo = p[0].min(p[1]).min(p[2]);
    let hi = p[0].max(p[1]).max(p[2]);
    let x0 = ceil_to_int(lo.x - 0.5).max(0);
    let y0 = ceil_to_int(lo.y - 0.5).max(0);
    let x1 = floor_to_int(hi.x - 0.5).min(size - 1);
    let y1 = floor_to_int(hi.y - 0.5).min(size - 1);
    // Most triangles of a detailed character hold no pixel centre at all, and many inside the
    // outline lie where every pixel of their bounds is already set.
    if x0 > x1 || y0 > y1 {
        return;
    }
    let bounds = span(x0 as usize, x1 as usize);
    if rows[y0 as usize..=y1 as usize]
        .iter()
        .all(|r| r & bounds == bounds)
    {
        return;
    }
    let area = (p[1] - p[0]).perp_dot(p[2] - p[0]);
    if area == 0.0 || !area.is_finite() {
        return;
    }
    let sign = area.signum();
    let edges = [0, 1, 2].map(|k| (p[k], p[(k + 1) % 3] - p[k]));
    if x1 - x0 < NARROW {
        // A narrow triangle: every pixel tested, as cheap as finding the ends.
        for y in y0..=y1 {
            let cy = y as f32 + 0.5;
            for x in x0..=x1 {
                let c = Vec2::new(x as f32 + 0.5, cy);
                if edges.iter().all(|&(a, e)| e.perp_dot(c - a) * sign >= 0.0) {
                    rows[y as usize] |= 1u128 << x;
                }
            }
        }
        return;
    }
    // Per edge, its line's x per unit of y: where it crosses a row, a first guess.
    let run = edges.map(|(_, e)| e.x / e.y);
    'rows: for y in y0..=y1 {
        let cy = y as f32 + 0.5;
        let (mut first, mut last) = (x0, x1);
        for (&(a, e), run) in edges.iter().zip(run) {
            // `e.perp_dot(c - a)` for the centre `c` of pixel `x` of this row, its first
            // product worked out once per row (the same operations in the same order).
            let row_part = e.x * (cy - a.y);
            let passes = |x: i32| (row_part - e.y * ((x as f32 + 0.5) - a.x)) * sign >= 0.0;
            // The test's value falls with x where `e.y * sign` is positive, rises where it is
            // negative, and does not change where it is zero.
            let slope = e.y * sign;
            if slope == 0.0 {
                if !passes(x0) {
                    continue 'rows;
                }
                continue;
            }
            // Where the edge's line crosses the row: a first guess (any start gives the same
            // end; a close one saves steps), then exact steps.
            let mut x = ((a.x + run * (cy - a.y) - 0.5) as i32).clamp(first, last);
            if slope > 0.0 {
                // A prefix passes: its last pixel bounds the run from the right.
                if passes(x) {
                    while x < last && passes(x + 1) {
                        x += 1;
                    }
                } else {
                    while x >= first && !passes(x) {
                        x -= 1;
                    }
                }
                last = x;
            } else {
                // A suffix passes: its first pixel bounds the run from the left.
                if passes(x) {
                    while x > first && passes(x - 1) {
                        x -= 1;
                    }
                } else {
                    while x <= last && !passes(x) {
                        x += 1;
                    }
                }
                first = x;
            }
            if first > last {
                continue 'rows;
            }
        }
        rows[y as usize] |= span(first as usize, last as usize);
    }
}

/// Bounds at most this many pixels wide are tested pixel by pixel.
const NARROW: i32 = 3;

/// `v.ceil() as i32` (saturating, NaN to 0) without a call to `ceilf`.
pub(crate) fn ceil_to_int(v: f32) -> i32 {
    let t = v as i32;
    if (t as f32) < v {
        t.saturating_add(1)
    } else {
        t
    }
}

/// `v.floor() as i32` (saturating, NaN to 0) without a call to `floorf`.
pub(crate) fn floor_to_int(v: f32) -> i32 {
    let t = v as i32;
    if (t as f32) > v {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// Bits `first..=last`.
fn span(first: usize, last: usize) -> u128 {
    let upto = if last + 1 >= 128 {
        u128::MAX
    } else {
        (1u128 << (last + 1)) - 1
    };
    upto & !((1u128 << first) - 1)
}

/// `row` shifted by `dx` pixels (positive: to larger x), pixels leaving the row dropped.
fn shifted(row: u128, dx: i32) -> u128 {
    let moved = match dx {
        0 => row,
        d if d > 0 => row.checked_shl(d as u32).unwrap_or(0),
        d => row.checked_shr(d.unsigned_abs()).unwrap_or(0),
    };
    moved & FULL
}

/// Pixels within `radius` (Euclidean, whole pixels) of a set pixel of `mask`.
pub(crate) fn dilated(mask: &Rows, radius: i32) -> Rows {
    let mut out = EMPTY;
    for dy in -radius..=radius {
        // The widest reach along the row at this row offset.
        let Some(reach) = (0..=radius)
            .rev()
            .find(|dx| dx * dx + dy * dy <= radius * radius)
        else {
            continue;
        };
        for (y, row) in mask.iter().enumerate() {
            let v = y as i32 + dy;
            if *row == 0 || !(0..SIZE as i32).contains(&v) {
                continue;
            }
            let spread = (-reach..=reach).fold(0, |acc, dx| acc | shifted(*row, dx));
            out[v as usize] |= spread;
        }
    }
    out
}

/// `empty`'s pixels reached from `seed` (a subset of it) along the row without crossing a pixel
/// outside `empty`, both ways (Kogge-Stone fills).
fn spread_in_row(seed: u128, empty: u128) -> u128 {
    let (mut up, mut up_open) = (seed, empty);
    let (mut down, mut down_open) = (seed, empty);
    for step in [1, 2, 4, 8, 16, 32, 64] {
        up |= up_open & (up << step);
        up_open &= up_open << step;
        down |= down_open & (down >> step);
        down_open &= down_open >> step;
    }
    up | down
}

/// `mask` with every empty region that does not reach the border filled (4-connected): the
/// empty pixels connected to the border are flooded, row sweeps down and up until nothing
/// changes, and everything else is inside.
pub(crate) fn filled(mask: &Rows) -> Rows {
    let empty: Rows = mask.map(|r| !r & FULL);
    let edge_columns = 1u128 | 1u128 << (SIZE - 1);
    let mut outside = EMPTY;
    for (y, o) in outside.iter_mut().enumerate() {
        let seed = if y == 0 || y == SIZE - 1 {
            empty[y]
        } else {
            empty[y] & edge_columns
        };
        *o = spread_in_row(seed, empty[y]);
    }
    loop {
        let mut changed = false;
        let mut visit = |outside: &mut Rows, y: usize| {
            let above = if y > 0 { outside[y - 1] } else { 0 };
            let below = if y + 1 < SIZE { outside[y + 1] } else { 0 };
            let seed = outside[y] | ((above | below) & empty[y]);
            if seed != outside[y] {
                outside[y] = spread_in_row(seed, empty[y]);
                changed = true;
            }
        };
        for y in 0..SIZE {
            visit(&mut outside, y);
        }
        for y in (0..SIZE).rev() {
            visit(&mut outside, y);
        }
        if !changed {
            break;
        }
    }
    outside.map(|o| !o & FULL)
}
