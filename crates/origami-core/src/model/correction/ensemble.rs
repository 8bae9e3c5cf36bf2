//! A regression tree ensemble (the additive model of gradient boosting): the prediction is
//! a base value plus, for each tree, the value of the leaf that the row reaches, the
//! learning rate being already folded into the leaf values. Its JSON form is compact,
//! one array `[feature, threshold, left, right, value]` per node, and `from_json`
//! validates the structure so that `predict` always terminates; `predict` itself never
//! panics, whatever the ensemble or the row.

use serde::{Deserialize, Serialize};

/// One node of a tree. An internal node sends a row to `left` when
/// `x[feature] <= threshold` (and when that value is NaN or missing), else to `right`; a
/// leaf has `left == right == 0` (the root is node 0, so 0 is never a child) and its
/// `value` is the tree's output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "NodeRow", into = "NodeRow")]
pub struct Node {
    pub feature: u32,
    pub threshold: f64,
    pub left: u32,
    pub right: u32,
    pub value: f64,
}

/// The JSON form of a node: `[feature, threshold, left, right, value]`.
type NodeRow = (u32, f64, u32, u32, f64);

impl From<NodeRow> for Node {
    fn from((feature, threshold, left, right, value): NodeRow) -> Node {
        Node {
            feature,
            threshold,
            left,
            right,
            value,
        }
    }
}

impl From<Node> for NodeRow {
    fn from(n: Node) -> NodeRow {
        (n.feature, n.threshold, n.left, n.right, n.value)
    }
}

impl Node {
    /// A leaf with output `value`.
    pub fn leaf(value: f64) -> Node {
        Node {
            feature: 0,
            threshold: 0.0,
            left: 0,
            right: 0,
            value,
        }
    }

    /// Whether this node is a leaf (both children 0).
    pub fn is_leaf(&self) -> bool {
        self.left == 0 && self.right == 0
    }
}

/// One regression tree; node 0 is the root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tree {
    pub nodes: Vec<Node>,
}

impl Tree {
    /// The index of the node where the row `x` stops: a leaf for a valid tree. A feature
    /// index beyond `x` reads as NaN, and NaN goes left. On a tree that would not pass
    /// validation the walk stops at the first node whose chosen child is not a later node
    /// of the tree, so it always ends. `None` for an empty tree.
    pub fn leaf_index(&self, x: &[f64]) -> Option<usize> {
        let mut i = 0usize;
        let mut node = self.nodes.first()?;
        loop {
            if node.is_leaf() {
                return Some(i);
            }
            let v = x.get(node.feature as usize).copied().unwrap_or(f64::NAN);
            let next = if v > node.threshold {
                node.right
            } else {
                node.left
            } as usize;
            match self.nodes.get(next) {
                Some(n) if next > i => {
                    i = next;
                    node = n;
                }
                _ => return Some(i),
            }
        }
    }

    /// The tree's output for the row `x` (0 for an empty tree).
    pub fn predict(&self, x: &[f64]) -> f64 {
        self.leaf_index(x)
            .and_then(|i| self.nodes.get(i))
            .map_or(0.0, |n| n.value)
    }

    /// The least and greatest value `predict` can return: the extremes over the nodes
    /// where a walk can stop (the leaves of a valid tree); (0, 0) for an empty tree.
    pub fn value_range(&self) -> (f64, f64) {
        let len = self.nodes.len();
        let mut range: Option<(f64, f64)> = None;
        for (i, n) in self.nodes.iter().enumerate() {
            let valid_child = |c: u32| (c as usize) > i && (c as usize) < len;
            let terminal = n.is_leaf() || !valid_child(n.left) || !valid_child(n.right);
            if terminal {
                range = Some(match range {
                    None => (n.value, n.value),
                    Some((lo, hi)) => (lo.min(n.value), hi.max(n.value)),
                });
            }
        }
        range.unwrap_or((0.0, 0.0))
    }
}

/// A tree ensemble: `base` plus the sum of the trees' outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ensemble {
    /// The feature names, in the order of a row's values.
    pub features: Vec<String>,
    pub base: f64,
    pub trees: Vec<Tree>,
}

/// Why a JSON text is not a valid ensemble.
#[derive(Debug, thiserror::Error)]
pub enum EnsembleError {
    #[error("cannot parse the ensemble JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the ensemble's base {0} is not finite")]
    NonFiniteBase(f64),
    #[error("tree {tree} has no nodes")]
    EmptyTree { tree: usize },
    #[error("tree {tree}, node {node}: one child is 0 and the other is not (a half leaf)")]
    HalfLeaf { tree: usize, node: usize },
    #[error("tree {tree}, node {node}: child {child} is not a later node of the tree's {len}")]
    BadChild {
        tree: usize,
        node: usize,
        child: u32,
        len: usize,
    },
    #[error("tree {tree}, node {node}: feature {feature} is not one of the {count} features")]
    BadFeature {
        tree: usize,
        node: usize,
        feature: u32,
        count: usize,
    },
    #[error("tree {tree}, node {node}: the {field} {value} is not finite")]
    NonFinite {
        tree: usize,
        node: usize,
        field: &'static str,
        value: f64,
    },
}

impl Ensemble {
    /// `base` plus the sum over the trees of the value of the leaf `x` reaches. A feature
    /// index beyond `x` reads as NaN and NaN goes left, so any slice is accepted.
    pub fn predict(&self, x: &[f64]) -> f64 {
        let mut acc = self.base;
        for tree in &self.trees {
            acc += tree.predict(x);
        }
        acc
    }

    /// [`Ensemble::predict`] of every row, tree by tree (each tree's nodes stay in cache
    /// while all rows walk it); each row's sum is taken in the same order, so every value
    /// is `predict`'s, bit for bit.
    pub fn predict_rows<R: AsRef<[f64]>>(&self, rows: &[R]) -> Vec<f64> {
        let mut acc = vec![self.base; rows.len()];
        for tree in &self.trees {
            for (a, x) in acc.iter_mut().zip(rows) {
                *a += tree.predict(x.as_ref());
            }
        }
        acc
    }

    /// The least and greatest value `predict` can return: `base` plus the sum over the
    /// trees of their least (greatest) leaf value. The sums are taken in the same order as
    /// in `predict`, and rounding is monotone, so the bracket holds exactly in floating
    /// point.
    pub fn bounds(&self) -> (f64, f64) {
        let (mut lo, mut hi) = (self.base, self.base);
        for tree in &self.trees {
            let (a, b) = tree.value_range();
            lo += a;
            hi += b;
        }
        (lo, hi)
    }

    /// Check the structure: a finite base; every tree non-empty; every node either a leaf
    /// (both children 0) or with both children later nodes of its tree (so walks end) and a
    /// feature among `features`; every threshold and value finite.
    pub fn validate(&self) -> Result<(), EnsembleError> {
        if !self.base.is_finite() {
            return Err(EnsembleError::NonFiniteBase(self.base));
        }
        for (t, tree) in self.trees.iter().enumerate() {
            let len = tree.nodes.len();
            if len == 0 {
                return Err(EnsembleError::EmptyTree { tree: t });
            }
            for (i, n) in tree.nodes.iter().enumerate() {
                for (field, value) in [("threshold", n.threshold), ("value", n.value)] {
                    if !value.is_finite() {
                        return Err(EnsembleError::NonFinite {
                            tree: t,
                            node: i,
                            field,
                            value,
                        });
                    }
                }
                if n.is_leaf() {
                    continue;
                }
                if n.left == 0 || n.right == 0 {
                    return Err(EnsembleError::HalfLeaf { tree: t, node: i });
                }
                for child in [n.left, n.right] {
                    if (child as usize) <= i || (child as usize) >= len {
                        return Err(EnsembleError::BadChild {
                            tree: t,
                            node: i,
                            child,
                            len,
                        });
                    }
                }
                if (n.feature as usize) >= self.features.len() {
                    return Err(EnsembleError::BadFeature {
                        tree: t,
                        node: i,
                        feature: n.feature,
                        count: self.features.len(),
                    });
                }
            }
        }
        Ok(())
    }

    /// Parse and validate an ensemble from its JSON form.
    pub fn from_json(text: &str) -> Result<Ensemble, EnsembleError> {
        let ensemble: Ensemble = serde_json::from_str(text)?;
        ensemble.validate()?;
        Ok(ensemble)
    }

    /// The compact JSON form: `{"features": [...], "base": b, "trees": [{"nodes":
    /// [[feature, threshold, left, right, value], ...]}, ...]}`. Non-finite numbers (only
    /// in an ensemble that fails `validate`) are written as `null`, which `from_json`
    /// rejects.
    pub fn to_json(&self) -> String {
        // Strings, numbers and sequences only: serde_json cannot fail on them.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn internal(feature: u32, threshold: f64, left: u32, right: u32) -> Node {
        Node {
            feature,
            threshold,
            left,
            right,
            value: 0.0,
        }
    }

    /// base 1; tree 0: a <= 0.5 ? 10 : (b <= 2 ? 20 : 30); tree 1: b <= 0 ? -1 : 1.
    fn two_trees() -> Ensemble {
        Ensemble {
            features: vec!["a".into(), "b".into()],
            base: 1.0,
            trees: vec![
                Tree {
                    nodes: vec![
                        internal(0, 0.5, 1, 2),
                        Node::leaf(10.0),
                        internal(1, 2.0, 3, 4),
                        Node::leaf(20.0),
                        Node::leaf(30.0),
                    ],
                },
                Tree {
                    nodes: vec![internal(1, 0.0, 1, 2), Node::leaf(-1.0), Node::leaf(1.0)],
                },
            ],
        }
    }

    fn assert_rejected(text: &str) {
        assert!(
            Ensemble::from_json(text).is_err(),
            "accepted an invalid ensemble: {text}"
        );
    }

    fn with_tree(nodes: &str) -> String {
        format!(r#"{{"features":["a","b"],"base":0.5,"trees":[{{"nodes":{nodes}}}]}}"#)
    }

    #[test]
    fn predict_known_values() {
        let e = two_trees();
        assert_eq!(e.predict(&[0.3, 5.0]), 12.0);
        assert_eq!(e.predict(&[0.7, 1.0]), 22.0);
        assert_eq!(e.predict(&[0.7, 3.0]), 32.0);
        assert_eq!(e.predict(&[0.7, -1.0]), 20.0);
        // Exactly at a threshold goes left.
        assert_eq!(e.predict(&[0.5, 0.0]), 10.0);
        assert_eq!(e.predict(&[0.7, 2.0]), 22.0);
        assert_eq!(e.predict(&[f64::INFINITY, f64::NEG_INFINITY]), 20.0);
        assert!(e.validate().is_ok());
    }

    #[test]
    fn nan_goes_left() {
        let e = two_trees();
        assert_eq!(e.predict(&[f64::NAN, f64::NAN]), 10.0);
        assert_eq!(e.predict(&[0.7, f64::NAN]), 20.0);
        assert_eq!(e.predict(&[f64::NAN, 5.0]), 12.0);
    }

    #[test]
    fn missing_feature_reads_as_nan() {
        let e = two_trees();
        assert_eq!(e.predict(&[0.7]), e.predict(&[0.7, f64::NAN]));
        assert_eq!(e.predict(&[]), e.predict(&[f64::NAN, f64::NAN]));
        assert_eq!(e.predict(&[]), 10.0);
        // Extra values are ignored.
        assert_eq!(e.predict(&[0.7, 3.0, 99.0]), 32.0);
    }

    #[test]
    fn json_round_trip() {
        let e = two_trees();
        let text = e.to_json();
        assert!(
            text.contains(r#""nodes":[[0,0.5,1,2,0.0],[0,0.0,0,0,10.0]"#),
            "{text}"
        );
        let back = Ensemble::from_json(&text).expect("round trip");
        assert_eq!(back, e);
        for x in [[0.3, 5.0], [0.7, 1.0], [0.7, 3.0], [f64::NAN, -2.0]] {
            assert_eq!(back.predict(&x), e.predict(&x));
        }
        assert_eq!(back.to_json(), text);
    }

    #[test]
    fn from_json_accepts_hand_written_text() {
        let text = with_tree("[[1, 0.25, 1, 2, 0], [0, 0, 0, 0, -2], [0, 0, 0, 0, 3.5]]");
        let e = Ensemble::from_json(&text).expect("valid");
        assert_eq!(e.predict(&[0.0, 0.2]), -1.5);
        assert_eq!(e.predict(&[0.0, 0.3]), 4.0);
    }

    #[test]
    fn from_json_rejects_invalid_structures() {
        // A cycle (1 -> 2 -> 1) and a self loop.
        assert_rejected(&with_tree(
            "[[0,0.5,1,3,0],[0,0.5,2,3,0],[1,0.5,1,3,0],[0,0,0,0,1]]",
        ));
        assert_rejected(&with_tree("[[0,0.5,1,2,0],[0,0.5,1,2,0],[0,0,0,0,1]]"));
        // A backward child (node 2 points to node 1).
        assert_rejected(&with_tree(
            "[[0,0.5,1,2,0],[0,0,0,0,1],[0,0.5,1,3,0],[0,0,0,0,2]]",
        ));
        // A child beyond the tree.
        assert_rejected(&with_tree("[[0,0.5,1,3,0],[0,0,0,0,1],[0,0,0,0,2]]"));
        // A feature beyond the feature list.
        assert_rejected(&with_tree("[[2,0.5,1,2,0],[0,0,0,0,1],[0,0,0,0,2]]"));
        // A half leaf.
        assert_rejected(&with_tree("[[0,0.5,1,0,0],[0,0,0,0,1]]"));
        assert_rejected(&with_tree("[[0,0.5,0,1,0],[0,0,0,0,1]]"));
        // An empty tree.
        assert_rejected(&with_tree("[]"));
        // Non-finite numbers: JSON has none, so null or an overflowing literal.
        assert_rejected(&with_tree("[[0,0.5,1,2,0],[0,0,0,0,null],[0,0,0,0,2]]"));
        assert_rejected(&with_tree("[[0,1e999,1,2,0],[0,0,0,0,1],[0,0,0,0,2]]"));
        assert_rejected(r#"{"features":[],"base":null,"trees":[]}"#);
        // Malformed nodes and garbage.
        assert_rejected(&with_tree("[[0,0.5,1,2],[0,0,0,0,1],[0,0,0,0,2]]"));
        assert_rejected(&with_tree("[[-1,0.5,1,2,0],[0,0,0,0,1],[0,0,0,0,2]]"));
        assert_rejected(&with_tree("[{\"feature\":0}]"));
        assert_rejected("");
        assert_rejected("not json at all");
        assert_rejected("{\"features\":[\"a\"],\"base\":0,\"trees\":[{\"nodes\":[[0,0,0,0");
        assert_rejected(r#"{"features":["a"],"base":0,"trees":[],"extra":1}"#);
        assert_rejected("[1,2,3]");
    }

    #[test]
    fn validate_names_the_tree_and_node() {
        let mut e = two_trees();
        e.trees[1].nodes[2].value = f64::NAN;
        let err = e.validate().expect_err("NaN value");
        assert!(matches!(
            err,
            EnsembleError::NonFinite {
                tree: 1,
                node: 2,
                field: "value",
                ..
            }
        ));
        assert!(err.to_string().contains("tree 1, node 2"), "{err}");

        let mut e = two_trees();
        e.trees[0].nodes[2].threshold = f64::INFINITY;
        assert!(matches!(
            e.validate(),
            Err(EnsembleError::NonFinite {
                tree: 0,
                node: 2,
                field: "threshold",
                ..
            })
        ));
        // A non-finite ensemble serialises to text from_json rejects.
        assert!(Ensemble::from_json(&e.to_json()).is_err());

        let mut e = two_trees();
        e.base = f64::NEG_INFINITY;
        assert!(matches!(e.validate(), Err(EnsembleError::NonFiniteBase(_))));

        let mut e = two_trees();
        e.trees[0].nodes[2].right = 2;
        assert!(matches!(
            e.validate(),
            Err(EnsembleError::BadChild {
                tree: 0,
                node: 2,
                child: 2,
                ..
            })
        ));

        let mut e = two_trees();
        e.trees[0].nodes[0].feature = 7;
        assert!(matches!(
            e.validate(),
            Err(EnsembleError::BadFeature {
                tree: 0,
                node: 0,
                feature: 7,
                count: 2
            })
        ));

        let mut e = two_trees();
        e.trees[1].nodes.clear();
        assert!(matches!(
            e.validate(),
            Err(EnsembleError::EmptyTree { tree: 1 })
        ));
    }

    #[test]
    fn predict_on_unvalidated_ensembles_terminates() {
        // Built directly, bypassing validation: cycles, self loops, out-of-range children
        // and features, an empty tree. predict must neither panic nor loop.
        let e = Ensemble {
            features: vec![],
            base: 0.0,
            trees: vec![
                Tree {
                    nodes: vec![internal(0, 0.5, 0, 0), Node::leaf(1.0)],
                },
                Tree {
                    nodes: vec![internal(9, 0.5, 1, 1), internal(3, 0.0, 0, 99)],
                },
                Tree {
                    nodes: vec![internal(u32::MAX, 0.0, u32::MAX, 1), Node::leaf(4.0)],
                },
                Tree { nodes: vec![] },
            ],
        };
        for x in [vec![], vec![1.0, 2.0], vec![f64::NAN; 5], vec![-1.0; 10]] {
            let p = e.predict(&x);
            let (lo, hi) = e.bounds();
            assert!(lo <= p && p <= hi, "{lo} <= {p} <= {hi}");
        }
    }

    #[test]
    fn bounds_bracket_predictions() {
        let e = two_trees();
        assert_eq!(e.bounds(), (10.0, 32.0));
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let (lo, hi) = e.bounds();
        let (mut seen_lo, mut seen_hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..2000 {
            let mut x = [next() * 5.0 - 1.0, next() * 5.0 - 1.0];
            if i % 17 == 0 {
                x[i % 2] = f64::NAN;
            }
            let p = e.predict(&x);
            assert!(lo <= p && p <= hi, "{lo} <= {p} <= {hi} at {x:?}");
            seen_lo = seen_lo.min(p);
            seen_hi = seen_hi.max(p);
        }
        // Both extremes are reachable here, so the bracket is tight.
        assert_eq!((seen_lo, seen_hi), (lo, hi));
    }
}
