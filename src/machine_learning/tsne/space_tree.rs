//! The Barnes-Hut space-partitioning tree (quadtree in 2-D, octree in 3-D, binary in 1-D):
//! far cells stand for their points by their centre of mass.

use super::gradient::StudentT;
use ndarray::ArrayView2;

const MAX_TREE_DEPTH: usize = 64;

#[derive(Debug, Clone)]
struct Cell {
    center_of_mass: [f64; 3],
    count: usize,
    squared_max_width: f64,
    /// Children occupy `nodes[first_child..first_child + n_children]`; none for a leaf.
    first_child: usize,
    n_children: usize,
    /// Leaf points are `order[start..end]`.
    start: usize,
    end: usize,
}

/// A 2^d-ary tree over the rows of `y` (`d <= 3`): cells split at their centre until they
/// hold one point, only identical points, or reach [`MAX_TREE_DEPTH`].
pub(crate) struct SpaceTree {
    cells: Vec<Cell>,
    order: Vec<usize>,
    /// The points, padded to three coordinates (contiguous, for the hot loops).
    pub(super) pts: Vec<[f64; 3]>,
    dim: usize,
}

/// Upper bound of the traversal stack: at most 7 siblings wait per level below the root.
const TRAVERSAL_STACK: usize = 7 * MAX_TREE_DEPTH + 8;

impl SpaceTree {
    pub(crate) fn build(y: ArrayView2<f64>) -> Self {
        let (n, dim) = y.dim();
        assert!(
            (1..=3).contains(&dim),
            "space tree supports 1 to 3 dimensions"
        );
        let pts: Vec<[f64; 3]> = y
            .outer_iter()
            .map(|row| {
                let mut p = [0.0f64; 3];
                for (dst, &src) in p.iter_mut().zip(row.iter()) {
                    *dst = src;
                }
                p
            })
            .collect();
        let mut lo = [0.0f64; 3];
        let mut hi = [0.0f64; 3];
        for ax in 0..dim {
            lo[ax] = pts.iter().map(|p| p[ax]).fold(f64::INFINITY, f64::min);
            hi[ax] = pts.iter().map(|p| p[ax]).fold(f64::NEG_INFINITY, f64::max);
        }
        let mut tree = SpaceTree {
            cells: Vec::with_capacity(2 * n),
            order: (0..n).collect(),
            pts,
            dim,
        };
        let mut scratch = vec![0usize; n];
        tree.cells.push(tree.make_cell(0, n));
        // (cell index, bounds, depth)
        let mut stack = vec![(0usize, lo, hi, 0usize)];
        while let Some((cell, lo, hi, depth)) = stack.pop() {
            let (start, end) = (tree.cells[cell].start, tree.cells[cell].end);
            if end - start <= 1 || depth >= MAX_TREE_DEPTH || tree.all_identical(start, end) {
                continue;
            }
            let mut mid = [0.0f64; 3];
            for ax in 0..dim {
                mid[ax] = lo[ax] + (hi[ax] - lo[ax]) * 0.5;
            }
            let pts = &tree.pts;
            let orthant = |p: usize| -> usize {
                (0..dim).fold(0, |o, ax| {
                    if pts[p][ax] >= mid[ax] {
                        o | (1 << ax)
                    } else {
                        o
                    }
                })
            };
            // Stable counting partition of order[start..end] by orthant.
            let mut counts = [0usize; 8];
            for &p in &tree.order[start..end] {
                counts[orthant(p)] += 1;
            }
            let mut offsets = [0usize; 8];
            let mut acc = start;
            for o in 0..(1 << dim) {
                offsets[o] = acc;
                acc += counts[o];
            }
            let mut cursor = offsets;
            for &p in &tree.order[start..end] {
                let o = orthant(p);
                scratch[cursor[o]] = p;
                cursor[o] += 1;
            }
            tree.order[start..end].copy_from_slice(&scratch[start..end]);
            let first = tree.cells.len();
            let mut children = 0;
            for o in 0..(1 << dim) {
                if counts[o] == 0 {
                    continue;
                }
                let (mut clo, mut chi) = (lo, hi);
                for ax in 0..dim {
                    if o & (1 << ax) != 0 {
                        clo[ax] = mid[ax];
                    } else {
                        chi[ax] = mid[ax];
                    }
                }
                let child = tree.make_cell(offsets[o], offsets[o] + counts[o]);
                let width2 = (0..dim)
                    .map(|ax| (chi[ax] - clo[ax]).powi(2))
                    .fold(0.0, f64::max);
                tree.cells.push(Cell {
                    squared_max_width: width2,
                    ..child
                });
                stack.push((first + children, clo, chi, depth + 1));
                children += 1;
            }
            tree.cells[cell].first_child = first;
            tree.cells[cell].n_children = children;
        }
        let root_width = (0..dim)
            .map(|ax| (hi[ax] - lo[ax]).powi(2))
            .fold(0.0, f64::max);
        tree.cells[0].squared_max_width = root_width;
        tree
    }

    fn make_cell(&self, start: usize, end: usize) -> Cell {
        let mut com = [0.0f64; 3];
        for &p in &self.order[start..end] {
            for (ax, c) in com.iter_mut().enumerate().take(self.dim) {
                *c += self.pts[p][ax];
            }
        }
        let count = end - start;
        for c in com.iter_mut().take(self.dim) {
            *c /= count as f64;
        }
        Cell {
            center_of_mass: com,
            count,
            squared_max_width: 0.0,
            first_child: 0,
            n_children: 0,
            start,
            end,
        }
    }

    fn all_identical(&self, start: usize, end: usize) -> bool {
        let first = self.pts[self.order[start]];
        self.order[start + 1..end]
            .iter()
            .all(|&p| self.pts[p] == first)
    }

    /// Repulsive-force terms on point `i` at `yi`: `(sum over others of w², weighted by the
    /// offset)` into `neg`, and the sum of `w` (its share of the normaliser `Z`).
    pub(super) fn repulsion(
        &self,
        i: usize,
        kernel: &StudentT,
        theta2: f64,
        neg: &mut [f64; 3],
    ) -> f64 {
        let yi = &self.pts[i];
        let mut sum_q = 0.0;
        let mut stack = [0usize; TRAVERSAL_STACK];
        let mut top = 1; // stack[0] = root
        while top > 0 {
            top -= 1;
            let cell = &self.cells[stack[top]];
            if cell.n_children == 0 {
                for &p in &self.order[cell.start..cell.end] {
                    if p == i {
                        continue;
                    }
                    let mut delta = [0.0f64; 3];
                    let mut d2 = 0.0;
                    for ax in 0..self.dim {
                        delta[ax] = yi[ax] - self.pts[p][ax];
                        d2 += delta[ax] * delta[ax];
                    }
                    let q = kernel.weight(d2);
                    sum_q += q;
                    for ax in 0..self.dim {
                        neg[ax] += q * q * delta[ax];
                    }
                }
                continue;
            }
            let mut delta = [0.0f64; 3];
            let mut d2 = 0.0;
            for ax in 0..self.dim {
                delta[ax] = yi[ax] - cell.center_of_mass[ax];
                d2 += delta[ax] * delta[ax];
            }
            if d2 > 0.0 && cell.squared_max_width / d2 < theta2 {
                let size = cell.count as f64;
                let q = kernel.weight(d2);
                sum_q += size * q;
                for ax in 0..self.dim {
                    neg[ax] += size * q * q * delta[ax];
                }
            } else {
                // Children pushed in reverse so they are visited in orthant order.
                for child in (cell.first_child..cell.first_child + cell.n_children).rev() {
                    stack[top] = child;
                    top += 1;
                }
            }
        }
        sum_q
    }
}

#[cfg(test)]
mod tests {
    use crate::machine_learning::tsne::{TsneInit, TSNE};
    use ndarray::Array2;

    #[test]
    fn duplicate_points_do_not_break_the_tree() {
        let mut x = Array2::<f64>::zeros((30, 2));
        for i in 0..30 {
            x[[i, 0]] = (i / 10) as f64; // three groups of ten identical points
        }
        let mut tsne = TSNE::builder(2)
            .with_perplexity(5.0)
            .with_tsne_init(TsneInit::Random)
            .with_seed(Some(0))
            .with_max_iter(250);
        let y = tsne.fit_transform_checked(&x).unwrap();
        assert!(y.iter().all(|v| v.is_finite()));
    }
}
