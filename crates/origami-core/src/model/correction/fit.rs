//! Gradient boosting with histogram splits, after Friedman, 'Greedy function
//! approximation: a gradient boosting machine' (Annals of Statistics, 2001), and the
//! binned, leaf-wise trees of LightGBM (Ke et al., NeurIPS 2017): squared loss, so each
//! round fits a regression tree to the residuals; features are binned once up front
//! (at most `max_bins` bins, quantile cuts), each tree grows best-first from per-leaf
//! histograms (the smaller child's built, its sibling's got by subtraction) and its leaves
//! take the learning rate times their mean residual. Deterministic: no randomness, and
//! ties go to the lowest feature, then the lowest bin.

use super::ensemble::{Ensemble, Node, Tree};

/// The boosting parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct FitParams {
    /// The number of boosting rounds (trees).
    pub trees: usize,
    /// The shrinkage folded into every leaf value, in (0, 1].
    pub learning_rate: f64,
    /// The most leaves of one tree (at least 2).
    pub max_leaves: usize,
    /// The fewest training rows of a leaf (0 reads as 1).
    pub min_samples_leaf: usize,
    /// The most bins of one feature, in 2..=65535.
    pub max_bins: usize,
}

impl Default for FitParams {
    fn default() -> FitParams {
        FitParams {
            trees: 600,
            learning_rate: 0.05,
            max_leaves: 31,
            min_samples_leaf: 40,
            max_bins: 255,
        }
    }
}

/// Why `fit` refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    #[error("no training rows")]
    Empty,
    #[error("{rows} feature rows but {targets} targets")]
    TargetCount { rows: usize, targets: usize },
    #[error("{names} feature names but row 0 has {columns} values")]
    FeatureNames { names: usize, columns: usize },
    #[error("row {row} has {len} values, expected {expected}")]
    Ragged {
        row: usize,
        len: usize,
        expected: usize,
    },
    #[error("row {row}, feature {feature}: the value {value} is not finite")]
    NonFiniteFeature {
        row: usize,
        feature: usize,
        value: f64,
    },
    #[error("target {row}: the value {value} is not finite")]
    NonFiniteTarget { row: usize, value: f64 },
    #[error("{0} features are more than a tree node can index")]
    TooManyFeatures(usize),
    #[error("the number of trees must be at least 1")]
    ZeroTrees,
    #[error("max_leaves must be at least 2, got {0}")]
    TooFewLeaves(usize),
    #[error("max_bins must be in 2..=65535, got {0}")]
    Bins(usize),
    #[error("the learning rate must be in (0, 1], got {0}")]
    LearningRate(f64),
    #[error("the fit overflowed (targets too large): {0}")]
    Overflow(String),
}

/// The least gain of a split.
const MIN_GAIN: f64 = 1e-12;

/// Fit a boosted ensemble of regression trees to `y` from the rows `x` (one value per
/// feature of `features`, in order) under squared loss.
pub fn fit(
    features: Vec<String>,
    x: &[Vec<f64>],
    y: &[f64],
    params: &FitParams,
) -> Result<Ensemble, FitError> {
    check(&features, x, y, params)?;
    let binned = Binned::new(x, features.len(), params.max_bins);
    let base = y.iter().sum::<f64>() / y.len() as f64;
    let mut booster = Booster::new(&binned, y, base, params);
    let mut trees = Vec::with_capacity(params.trees);
    for _ in 0..params.trees {
        trees.push(booster.round());
    }
    let ensemble = Ensemble {
        features,
        base,
        trees,
    };
    ensemble
        .validate()
        .map_err(|e| FitError::Overflow(e.to_string()))?;
    Ok(ensemble)
}

fn check(
    features: &[String],
    x: &[Vec<f64>],
    y: &[f64],
    params: &FitParams,
) -> Result<(), FitError> {
    if params.trees == 0 {
        return Err(FitError::ZeroTrees);
    }
    if params.max_leaves < 2 {
        return Err(FitError::TooFewLeaves(params.max_leaves));
    }
    if !(2..=65535).contains(&params.max_bins) {
        return Err(FitError::Bins(params.max_bins));
    }
    // Written so that NaN fails too.
    if !(params.learning_rate > 0.0 && params.learning_rate <= 1.0) {
        return Err(FitError::LearningRate(params.learning_rate));
    }
    if x.is_empty() {
        return Err(FitError::Empty);
    }
    if x.len() != y.len() {
        return Err(FitError::TargetCount {
            rows: x.len(),
            targets: y.len(),
        });
    }
    let width = features.len();
    if u32::try_from(width).is_err() {
        return Err(FitError::TooManyFeatures(width));
    }
    if x[0].len() != width {
        return Err(FitError::FeatureNames {
            names: width,
            columns: x[0].len(),
        });
    }
    for (row, values) in x.iter().enumerate() {
        if values.len() != width {
            return Err(FitError::Ragged {
                row,
                len: values.len(),
                expected: width,
            });
        }
        if let Some((feature, &value)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(FitError::NonFiniteFeature {
                row,
                feature,
                value,
            });
        }
    }
    if let Some((row, &value)) = y.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(FitError::NonFiniteTarget { row, value });
    }
    Ok(())
}

/// The split threshold between two finite values `a < b`: a point `t` with `a <= t < b`,
/// so that `x <= t` separates them, namely their midpoint rounded to the fewest significant
/// decimal digits that keep it within the middle half of the gap. Any such point routes
/// the training rows alike; the short one keeps the JSON small and reads back exactly
/// (serde_json's default number parser is exact for short decimals, not for every
/// 17-digit one).
fn midpoint(a: f64, b: f64) -> f64 {
    let mut mid = 0.5 * a + 0.5 * b;
    if !(mid >= a && mid < b) {
        mid = a;
    }
    let slack = 0.25 * (b - a);
    for digits in 1..=17 {
        if let Ok(t) = format!("{:.*e}", digits - 1, mid).parse::<f64>() {
            if t >= a && t < b && (t - mid).abs() <= slack {
                return t;
            }
        }
    }
    // Not reached: 17 significant digits reproduce `mid` itself.
    mid
}

/// The split thresholds of one feature from its values: with few enough distinct values,
/// one bin each; otherwise bins of about equal row counts, cut only between distinct
/// values. Threshold `b` separates bin `b` from bin `b + 1` and lies between the largest
/// value of the one and the smallest of the other.
fn feature_thresholds(mut values: Vec<f64>, max_bins: usize) -> Vec<f64> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let mut distinct: Vec<(f64, usize)> = Vec::new();
    for v in values {
        match distinct.last_mut() {
            Some((last, count)) if *last == v => *count += 1,
            _ => distinct.push((v, 1)),
        }
    }
    if distinct.len() <= max_bins {
        return distinct
            .windows(2)
            .map(|w| midpoint(w[0].0, w[1].0))
            .collect();
    }
    // Close a bin after the distinct value where the cumulative count first reaches
    // k * n / max_bins, the next k lying above it; the cumulative count stays below n
    // before the last value, so k stays below max_bins and there are at most max_bins bins.
    let (n, bins) = (n as u128, max_bins as u128);
    let mut cuts = Vec::with_capacity(max_bins - 1);
    let mut cumulative: u128 = 0;
    let mut k: u128 = 1;
    for w in distinct.windows(2) {
        cumulative += w[0].1 as u128;
        if cumulative * bins >= k * n {
            cuts.push(midpoint(w[0].0, w[1].0));
            k = cumulative * bins / n + 1;
        }
    }
    cuts
}

/// The training rows binned once: per feature its thresholds, and per row and feature a
/// bin index (row-major), so that `bin <= b` exactly when `value <= thresholds[b]`.
struct Binned {
    rows: usize,
    width: usize,
    bins: Vec<u16>,
    /// The start of each feature's bins in a histogram; `width + 1` entries.
    offsets: Vec<usize>,
    thresholds: Vec<Vec<f64>>,
}

impl Binned {
    fn new(x: &[Vec<f64>], width: usize, max_bins: usize) -> Binned {
        let rows = x.len();
        let thresholds: Vec<Vec<f64>> = (0..width)
            .map(|f| feature_thresholds(x.iter().map(|r| r[f]).collect(), max_bins))
            .collect();
        let mut offsets = Vec::with_capacity(width + 1);
        let mut total = 0;
        offsets.push(0);
        for t in &thresholds {
            total += t.len() + 1;
            offsets.push(total);
        }
        let mut bins = Vec::with_capacity(rows * width);
        for row in x {
            for (v, t) in row.iter().zip(&thresholds) {
                // The count of thresholds below the value: at most max_bins - 1 <= 65534.
                bins.push(t.partition_point(|&c| c < *v) as u16);
            }
        }
        Binned {
            rows,
            width,
            bins,
            offsets,
            thresholds,
        }
    }

    fn histogram_len(&self) -> usize {
        self.offsets[self.width]
    }

    fn bin(&self, row: usize, feature: usize) -> usize {
        self.bins[row * self.width + feature] as usize
    }
}

/// One histogram bin: the sum of the gradients and the count of the rows in it.
#[derive(Debug, Clone, Copy, Default)]
struct Bin {
    sum: f64,
    count: usize,
}

#[derive(Debug, Clone, Copy)]
struct Split {
    feature: usize,
    bin: usize,
    gain: f64,
}

/// A leaf of the tree being grown: its node, its rows `order[start..end]`, their gradient
/// sum, and (while it may still be split) its histogram and best split.
struct Leaf {
    node: usize,
    start: usize,
    end: usize,
    sum: f64,
    hist: Option<Vec<Bin>>,
    split: Option<Split>,
}

impl Leaf {
    fn count(&self) -> usize {
        self.end - self.start
    }
}

struct Booster<'a> {
    binned: &'a Binned,
    y: &'a [f64],
    learning_rate: f64,
    max_leaves: usize,
    min_leaf: usize,
    /// The current prediction of each training row.
    pred: Vec<f64>,
    /// The residual of each training row in this round.
    grad: Vec<f64>,
    /// A permutation of the rows; each leaf owns a range of it, kept in ascending order.
    order: Vec<usize>,
    scratch: Vec<usize>,
    /// Spare histogram buffers.
    pool: Vec<Vec<Bin>>,
}

impl<'a> Booster<'a> {
    fn new(binned: &'a Binned, y: &'a [f64], base: f64, params: &FitParams) -> Booster<'a> {
        Booster {
            binned,
            y,
            learning_rate: params.learning_rate,
            // Node indices are u32 and a tree has 2 * leaves - 1 nodes.
            max_leaves: params.max_leaves.min(u32::MAX as usize / 2),
            min_leaf: params.min_samples_leaf.max(1),
            pred: vec![base; binned.rows],
            grad: vec![0.0; binned.rows],
            order: (0..binned.rows).collect(),
            scratch: Vec::with_capacity(binned.rows),
            pool: Vec::new(),
        }
    }

    fn leaf_value(&self, sum: f64, count: usize) -> f64 {
        self.learning_rate * sum / count as f64
    }

    fn take_hist(&mut self) -> Vec<Bin> {
        match self.pool.pop() {
            Some(h) => h,
            None => vec![Bin::default(); self.binned.histogram_len()],
        }
    }

    /// The histogram of the rows `order[start..end]`.
    fn build_hist(&mut self, start: usize, end: usize) -> Vec<Bin> {
        let mut hist = self.take_hist();
        hist.fill(Bin::default());
        let width = self.binned.width;
        let offsets = &self.binned.offsets[..width];
        for &r in &self.order[start..end] {
            let g = self.grad[r];
            let row = &self.binned.bins[r * width..(r + 1) * width];
            for (&b, &off) in row.iter().zip(offsets) {
                let h = &mut hist[off + b as usize];
                h.sum += g;
                h.count += 1;
            }
        }
        hist
    }

    /// The best split of a leaf with gradient sum `sum` over `count` rows, if any has gain
    /// above `MIN_GAIN` and leaves `min_leaf` rows on each side; ties go to the lowest
    /// feature, then the lowest bin.
    fn best_split(&self, hist: &[Bin], sum: f64, count: usize) -> Option<Split> {
        if count < 2 * self.min_leaf {
            return None;
        }
        let parent = sum * sum / count as f64;
        let mut best: Option<Split> = None;
        for feature in 0..self.binned.width {
            let bins = &hist[self.binned.offsets[feature]..self.binned.offsets[feature + 1]];
            let (mut left_sum, mut left_count) = (0.0, 0usize);
            for (bin, h) in bins.iter().enumerate().take(bins.len().saturating_sub(1)) {
                if h.count == 0 {
                    // The same partition as the last non-empty bin's.
                    continue;
                }
                left_sum += h.sum;
                left_count += h.count;
                if left_count < self.min_leaf {
                    continue;
                }
                let right_count = count - left_count;
                if right_count < self.min_leaf {
                    break;
                }
                let right_sum = sum - left_sum;
                let gain = left_sum * left_sum / left_count as f64
                    + right_sum * right_sum / right_count as f64
                    - parent;
                if gain > MIN_GAIN && !matches!(best, Some(s) if s.gain >= gain) {
                    best = Some(Split { feature, bin, gain });
                }
            }
        }
        best
    }

    /// Fit one tree to the current residuals and add it to the predictions.
    fn round(&mut self) -> Tree {
        let n = self.binned.rows;
        for ((g, y), p) in self.grad.iter_mut().zip(self.y).zip(&self.pred) {
            *g = y - p;
        }
        for (i, o) in self.order.iter_mut().enumerate() {
            *o = i;
        }
        let sum: f64 = self.grad.iter().sum();
        let mut nodes = vec![Node::leaf(self.leaf_value(sum, n))];
        let mut leaves = vec![Leaf {
            node: 0,
            start: 0,
            end: n,
            sum,
            hist: None,
            split: None,
        }];
        if n >= 2 * self.min_leaf {
            let hist = self.build_hist(0, n);
            leaves[0].split = self.best_split(&hist, sum, n);
            leaves[0].hist = Some(hist);
        }
        while leaves.len() < self.max_leaves {
            // The leaf of the largest gain; ties go to the earliest leaf.
            let mut chosen: Option<(usize, f64)> = None;
            for (i, leaf) in leaves.iter().enumerate() {
                if let Some(s) = leaf.split {
                    if !matches!(chosen, Some((_, g)) if g >= s.gain) {
                        chosen = Some((i, s.gain));
                    }
                }
            }
            let Some((li, _)) = chosen else { break };
            let leaves_after = leaves.len() + 1;
            let leaf = &mut leaves[li];
            let (Some(split), Some(hist)) = (leaf.split.take(), leaf.hist.take()) else {
                break;
            };
            let right = self.split_leaf(&mut nodes, leaf, split, hist, leaves_after);
            leaves.push(right);
        }
        for leaf in leaves {
            let value = nodes[leaf.node].value;
            for &r in &self.order[leaf.start..leaf.end] {
                self.pred[r] += value;
            }
            if let Some(h) = leaf.hist {
                self.pool.push(h);
            }
        }
        Tree { nodes }
    }

    /// Split `leaf` by `split` into two: it becomes the left child, and the right child is
    /// returned; `parent_hist` is the leaf's histogram. `leaves_after` is the leaf count
    /// after the split: at the most leaves, the children need no histograms.
    fn split_leaf(
        &mut self,
        nodes: &mut Vec<Node>,
        leaf: &mut Leaf,
        split: Split,
        mut parent_hist: Vec<Bin>,
        leaves_after: usize,
    ) -> Leaf {
        let (feature, bin) = (split.feature, split.bin);

        // Stable partition of the leaf's rows: left those with bin <= split bin.
        self.scratch.clear();
        let mut w = leaf.start;
        let (mut left_sum, mut right_sum) = (0.0, 0.0);
        for i in leaf.start..leaf.end {
            let r = self.order[i];
            if self.binned.bin(r, feature) <= bin {
                self.order[w] = r;
                w += 1;
                left_sum += self.grad[r];
            } else {
                self.scratch.push(r);
                right_sum += self.grad[r];
            }
        }
        self.order[w..leaf.end].copy_from_slice(&self.scratch);

        let left_node = nodes.len();
        let right_node = left_node + 1;
        let parent = &mut nodes[leaf.node];
        parent.feature = feature as u32;
        parent.threshold = self.binned.thresholds[feature][bin];
        parent.left = left_node as u32;
        parent.right = right_node as u32;
        let (left_count, right_count) = (w - leaf.start, leaf.end - w);
        nodes.push(Node::leaf(self.leaf_value(left_sum, left_count)));
        nodes.push(Node::leaf(self.leaf_value(right_sum, right_count)));

        let mut right = Leaf {
            node: right_node,
            start: w,
            end: leaf.end,
            sum: right_sum,
            hist: None,
            split: None,
        };
        leaf.node = left_node;
        leaf.end = w;
        leaf.sum = left_sum;

        let splittable = |c: usize| c >= 2 * self.min_leaf;
        if leaves_after < self.max_leaves && (splittable(left_count) || splittable(right_count)) {
            // Build the smaller child's histogram; the larger's is the parent's less it.
            let (small, large) = if left_count <= right_count {
                (&mut *leaf, &mut right)
            } else {
                (&mut right, &mut *leaf)
            };
            let small_hist = self.build_hist(small.start, small.end);
            for (p, s) in parent_hist.iter_mut().zip(&small_hist) {
                p.count -= s.count;
                p.sum = if p.count == 0 { 0.0 } else { p.sum - s.sum };
            }
            small.split = self.best_split(&small_hist, small.sum, small.count());
            large.split = self.best_split(&parent_hist, large.sum, large.count());
            small.hist = Some(small_hist);
            large.hist = Some(parent_hist);
            for child in [small, large] {
                if child.split.is_none() {
                    if let Some(h) = child.hist.take() {
                        self.pool.push(h);
                    }
                }
            }
        } else {
            self.pool.push(parent_hist);
        }
        right
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Lcg(u64);

    impl Lcg {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    fn truth(x: &[f64]) -> f64 {
        let a = if x[0] > 0.5 { 3.0 } else { 0.0 };
        let b = if x[1] > 0.3 && x[2] < 0.7 { 2.0 } else { 0.0 };
        a + b
    }

    /// Rows of four features (the last one pure noise) and noisy targets.
    fn data(rows: usize, seed: u64) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut rng = Lcg(seed);
        let x: Vec<Vec<f64>> = (0..rows)
            .map(|_| (0..4).map(|_| rng.uniform()).collect())
            .collect();
        let y = x
            .iter()
            .map(|r| truth(r) + 0.1 * (rng.uniform() - 0.5))
            .collect();
        (x, y)
    }

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("x{i}")).collect()
    }

    fn small_params() -> FitParams {
        FitParams {
            trees: 150,
            learning_rate: 0.1,
            max_leaves: 8,
            min_samples_leaf: 20,
            max_bins: 255,
        }
    }

    fn mse(model: &Ensemble, x: &[Vec<f64>], y: &[f64]) -> f64 {
        x.iter()
            .zip(y)
            .map(|(r, t)| (model.predict(r) - t).powi(2))
            .sum::<f64>()
            / y.len() as f64
    }

    #[test]
    fn learns_a_step_function() {
        let (x, y) = data(2000, 1);
        let model = fit(names(4), &x, &y, &small_params()).expect("fit");
        assert_eq!(model.trees.len(), 150);
        let train = mse(&model, &x, &y);
        assert!(train < 0.05, "training MSE {train}");
        let (fresh, _) = data(2000, 2);
        let truths: Vec<f64> = fresh.iter().map(|r| truth(r)).collect();
        let test = mse(&model, &fresh, &truths);
        assert!(test < 0.05, "fresh-set MSE {test}");
        let close = fresh
            .iter()
            .zip(&truths)
            .filter(|(r, t)| (model.predict(r) - *t).abs() < 0.25)
            .count();
        assert!(close * 100 >= 97 * fresh.len(), "{close} of 2000 close");
        let (lo, hi) = model.bounds();
        for r in x.iter().chain(&fresh) {
            let p = model.predict(r);
            assert!(lo <= p && p <= hi);
        }
    }

    #[test]
    fn default_params_fit_and_round_trip() {
        let (x, y) = data(2000, 3);
        let model = fit(names(4), &x, &y, &FitParams::default()).expect("fit");
        assert_eq!(model.trees.len(), 600);
        assert!(mse(&model, &x, &y) < 0.05);
        let back = Ensemble::from_json(&model.to_json()).expect("valid JSON");
        for r in &x {
            assert!((back.predict(r) - model.predict(r)).abs() < 1e-9);
        }
        // The thresholds (short decimals) read back exactly, so rows route alike; leaf
        // values may move by an ulp under serde_json's default number parser.
        for (t, u) in back.trees.iter().zip(&model.trees) {
            for (a, b) in t.nodes.iter().zip(&u.nodes) {
                assert_eq!(a.threshold, b.threshold);
            }
            for r in x.iter().take(200) {
                assert_eq!(t.leaf_index(r), u.leaf_index(r));
            }
        }
    }

    #[test]
    fn deterministic() {
        let (x, y) = data(1500, 4);
        let a = fit(names(4), &x, &y, &small_params()).expect("fit");
        let b = fit(names(4), &x, &y, &small_params()).expect("fit");
        assert_eq!(a.to_json(), b.to_json());
    }

    #[test]
    fn leaves_respect_min_samples_leaf() {
        let (x, y) = data(2000, 5);
        for min_leaf in [1, 7, 50, 400] {
            let params = FitParams {
                trees: 40,
                min_samples_leaf: min_leaf,
                max_leaves: 31,
                ..small_params()
            };
            let model = fit(names(4), &x, &y, &params).expect("fit");
            for (t, tree) in model.trees.iter().enumerate() {
                let mut counts = vec![0usize; tree.nodes.len()];
                for r in &x {
                    counts[tree.leaf_index(r).expect("non-empty tree")] += 1;
                }
                for (i, node) in tree.nodes.iter().enumerate() {
                    if node.is_leaf() {
                        assert!(
                            counts[i] >= min_leaf,
                            "min {min_leaf}: tree {t}, leaf {i} has {} rows",
                            counts[i]
                        );
                    }
                }
                assert!(tree.nodes.len() < 2 * 31);
            }
        }
    }

    #[test]
    fn constant_target() {
        let (x, _) = data(500, 6);
        let y = vec![2.7; x.len()];
        let model = fit(names(4), &x, &y, &small_params()).expect("fit");
        for r in &x {
            assert!((model.predict(r) - 2.7).abs() < 1e-9);
        }
        assert!((model.predict(&[]) - 2.7).abs() < 1e-9);
        assert!(model.trees.iter().all(|t| t.nodes.len() == 1));
    }

    #[test]
    fn too_few_rows_to_split_and_no_features() {
        let x = vec![vec![0.0], vec![1.0], vec![2.0]];
        let y = [1.0, 2.0, 6.0];
        let model = fit(names(1), &x, &y, &FitParams::default()).expect("fit");
        assert!(model.trees.iter().all(|t| t.nodes.len() == 1));
        assert!((model.predict(&[5.0]) - 3.0).abs() < 1e-9);
        let x = vec![vec![]; 3];
        let model = fit(vec![], &x, &y, &FitParams::default()).expect("fit");
        assert!((model.predict(&[]) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn many_distinct_values_are_binned() {
        // 3000 distinct values into at most 16 bins: at most 15 thresholds in use, and
        // the thresholds route the training rows as the bins did.
        let (x, y) = data(3000, 7);
        let params = FitParams {
            max_bins: 16,
            ..small_params()
        };
        let model = fit(names(4), &x, &y, &params).expect("fit");
        let mut thresholds: Vec<Vec<f64>> = vec![vec![]; 4];
        for tree in &model.trees {
            for n in tree.nodes.iter().filter(|n| !n.is_leaf()) {
                let t = &mut thresholds[n.feature as usize];
                if !t.contains(&n.threshold) {
                    t.push(n.threshold);
                }
            }
        }
        assert!(thresholds.iter().all(|t| t.len() <= 15), "{thresholds:?}");
        assert!(mse(&model, &x, &y) < 0.1);
        let cuts = feature_thresholds(x.iter().map(|r| r[0]).collect(), 16);
        assert_eq!(cuts.len(), 15);
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn thresholds_separate_neighbouring_values() {
        let a = 1.0f64;
        let b = f64::from_bits(a.to_bits() + 1);
        let t = midpoint(a, b);
        assert!(a <= t && t < b);
        let t = midpoint(-f64::MAX, f64::MAX);
        assert!(t.is_finite());
        // Short decimals near the middle of the gap.
        assert_eq!(midpoint(0.1, 0.9), 0.5);
        assert_eq!(midpoint(0.12, 0.19), 0.15);
        assert_eq!(midpoint(0.3, 0.30000001), 0.300000005);
        assert_eq!(midpoint(-7.0, -6.0), -6.5);
        assert_eq!(midpoint(1e-30, 3e-30), 2e-30);
        assert_eq!(
            feature_thresholds(vec![2.0, 1.0, 2.0, 3.0], 255),
            vec![1.5, 2.5]
        );
        assert_eq!(
            feature_thresholds(vec![-0.0, 0.0, 0.0], 255),
            Vec::<f64>::new()
        );
        // A heavy value takes a bin of its own, with at most max_bins bins.
        let mut v = vec![5.0; 100];
        v.extend((0..100).map(f64::from));
        let cuts = feature_thresholds(v, 4);
        assert!(cuts.len() <= 3 && !cuts.is_empty(), "{cuts:?}");
    }

    #[test]
    fn every_error_is_returned() {
        let (x, y) = data(100, 8);
        let p = small_params();
        let err = |f: Vec<String>, x: &[Vec<f64>], y: &[f64], p: &FitParams| {
            fit(f, x, y, p).expect_err("must fail")
        };
        assert_eq!(err(names(4), &[], &[], &p), FitError::Empty);
        assert_eq!(
            err(names(4), &x, &y[..99], &p),
            FitError::TargetCount {
                rows: 100,
                targets: 99
            }
        );
        assert_eq!(
            err(names(3), &x, &y, &p),
            FitError::FeatureNames {
                names: 3,
                columns: 4
            }
        );
        let mut ragged = x.clone();
        ragged[17].pop();
        assert_eq!(
            err(names(4), &ragged, &y, &p),
            FitError::Ragged {
                row: 17,
                len: 3,
                expected: 4
            }
        );
        let mut bad = x.clone();
        bad[5][2] = f64::INFINITY;
        assert!(matches!(
            err(names(4), &bad, &y, &p),
            FitError::NonFiniteFeature {
                row: 5,
                feature: 2,
                ..
            }
        ));
        bad[5][2] = f64::NAN;
        assert!(matches!(
            err(names(4), &bad, &y, &p),
            FitError::NonFiniteFeature { row: 5, .. }
        ));
        let mut bad_y = y.clone();
        bad_y[9] = f64::NAN;
        assert!(matches!(
            err(names(4), &x, &bad_y, &p),
            FitError::NonFiniteTarget { row: 9, .. }
        ));
        let with = |f: fn(&mut FitParams)| {
            let mut q = small_params();
            f(&mut q);
            q
        };
        assert_eq!(
            err(names(4), &x, &y, &with(|q| q.trees = 0)),
            FitError::ZeroTrees
        );
        for leaves in [0, 1] {
            let mut q = small_params();
            q.max_leaves = leaves;
            assert_eq!(err(names(4), &x, &y, &q), FitError::TooFewLeaves(leaves));
        }
        for bins in [0, 1, 65536] {
            let mut q = small_params();
            q.max_bins = bins;
            assert_eq!(err(names(4), &x, &y, &q), FitError::Bins(bins));
        }
        for rate in [0.0, -0.1, 1.5, f64::NAN, f64::INFINITY] {
            let mut q = small_params();
            q.learning_rate = rate;
            assert!(matches!(
                err(names(4), &x, &y, &q),
                FitError::LearningRate(_)
            ));
        }
        // Targets whose sum overflows.
        let huge = vec![f64::MAX; 100];
        assert!(matches!(
            err(names(4), &x, &huge, &p),
            FitError::Overflow(_)
        ));
        // The edges of the valid ranges are accepted.
        let edge = FitParams {
            trees: 1,
            learning_rate: 1.0,
            max_leaves: 2,
            min_samples_leaf: 0,
            max_bins: 2,
        };
        assert!(fit(names(4), &x, &y, &edge).is_ok());
        let edge = FitParams {
            max_bins: 65535,
            ..edge
        };
        assert!(fit(names(4), &x, &y, &edge).is_ok());
    }

    /// The brief's performance target: 36,000 rows x 27 features x 600 trees x 31 leaves.
    /// Run with `cargo test -p origami-core --release fit_timing -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn fit_timing() {
        let (rows, width) = (36_000, 27);
        let mut rng = Lcg(42);
        let x: Vec<Vec<f64>> = (0..rows)
            .map(|_| {
                (0..width)
                    .map(|f| {
                        let u = rng.uniform();
                        // A mix of continuous and few-valued features.
                        if f % 3 == 0 {
                            (u * 8.0).floor()
                        } else {
                            u
                        }
                    })
                    .collect()
            })
            .collect();
        let y: Vec<f64> = x
            .iter()
            .map(|r| {
                (r[1] * 6.0).sin()
                    + 0.3 * r[0]
                    + r[2] * r[4]
                    + 0.5 * ((r[5] > 0.4) as u8 as f64)
                    + 0.2 * (rng.uniform() - 0.5)
            })
            .collect();
        let start = std::time::Instant::now();
        let model = fit(names(width), &x, &y, &FitParams::default()).expect("fit");
        let seconds = start.elapsed().as_secs_f64();
        let leaves: usize = model
            .trees
            .iter()
            .map(|t| t.nodes.iter().filter(|n| n.is_leaf()).count())
            .sum();
        println!(
            "fit {rows} x {width} x {} trees: {seconds:.2} s, {:.1} leaves a tree, training MSE {:.4}",
            model.trees.len(),
            leaves as f64 / model.trees.len() as f64,
            mse(&model, &x, &y)
        );
    }
}
