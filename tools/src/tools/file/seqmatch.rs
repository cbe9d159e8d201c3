//! Similarity of two sequences as Python's `difflib.SequenceMatcher`
//! measures it (Ratcliff/Obershelp: the longest common block, then the
//! same on both sides of it), so the fuzzy matcher's thresholds pick the
//! same blocks as the reference's. Written from the algorithm's published
//! description; `autojunk` (elements of a long `b` that occur in more than
//! 1% of it are not used to start a block) is kept because it changes
//! results.
//!
//! Every comparison step is paid from a [`Budget`], so no input can make
//! the matcher run unbounded: a caller that runs out gets [`Exhausted`].

use std::collections::HashMap;

/// The work allowance ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exhausted;

/// Comparison steps left for one edit.
#[derive(Debug)]
pub struct Budget {
    left: u64,
}

impl Budget {
    pub fn new(steps: u64) -> Self {
        Self { left: steps }
    }

    /// Takes `n` steps, or fails when fewer are left.
    pub fn spend(&mut self, n: u64) -> Result<(), Exhausted> {
        if n > self.left {
            self.left = 0;
            return Err(Exhausted);
        }
        self.left -= n;
        Ok(())
    }
}

/// An edit step turning `a[a0..a1]` into `b[b0..b1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Equal,
    Replace,
    Delete,
    Insert,
}

/// `b` prepared for matching: where each element occurs.
pub struct Matcher<'b> {
    b: &'b [char],
    positions: HashMap<char, Vec<usize>>,
}

/// A common block: `a[i..i + n] == b[j..j + n]`.
type Block = (usize, usize, usize);

/// An edit step: `(op, a0, a1, b0, b1)`.
pub type Step = (Op, usize, usize, usize, usize);

impl<'b> Matcher<'b> {
    pub fn new(b: &'b [char], budget: &mut Budget) -> Result<Self, Exhausted> {
        budget.spend(b.len() as u64)?;
        let mut positions: HashMap<char, Vec<usize>> = HashMap::new();
        for (j, &c) in b.iter().enumerate() {
            positions.entry(c).or_default().push(j);
        }
        if b.len() >= 200 {
            let popular = b.len() / 100 + 1;
            positions.retain(|_, js| js.len() <= popular);
        }
        Ok(Self { b, positions })
    }

    /// The longest block common to `a[alo..ahi]` and `b[blo..bhi]`, the
    /// earliest in `a` (then in `b`) among equals, widened over equal
    /// neighbours that `autojunk` kept out of the index.
    fn longest(
        &self,
        a: &[char],
        (alo, ahi, blo, bhi): (usize, usize, usize, usize),
        budget: &mut Budget,
    ) -> Result<Block, Exhausted> {
        budget.spend(1 + self.b.len() as u64 / 8)?;
        let (mut bi, mut bj, mut size) = (alo, blo, 0);
        // Run lengths of common blocks ending at each `j`, for the previous
        // `i` and this one; only the entries set are cleared again.
        let mut run = vec![0usize; self.b.len()];
        let mut next = vec![0usize; self.b.len()];
        let (mut run_set, mut next_set): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for (i, c) in a.iter().enumerate().take(ahi).skip(alo) {
            budget.spend(1)?;
            if let Some(js) = self.positions.get(c) {
                for &j in js {
                    if j < blo {
                        continue;
                    }
                    if j >= bhi {
                        break;
                    }
                    budget.spend(1)?;
                    let k = if j > 0 { run[j - 1] } else { 0 } + 1;
                    next[j] = k;
                    next_set.push(j);
                    if k > size {
                        (bi, bj, size) = (i + 1 - k, j + 1 - k, k);
                    }
                }
            }
            for &j in &run_set {
                run[j] = 0;
            }
            run_set.clear();
            std::mem::swap(&mut run, &mut next);
            std::mem::swap(&mut run_set, &mut next_set);
        }
        while bi > alo && bj > blo && a[bi - 1] == self.b[bj - 1] {
            (bi, bj, size) = (bi - 1, bj - 1, size + 1);
        }
        while bi + size < ahi && bj + size < bhi && a[bi + size] == self.b[bj + size] {
            size += 1;
        }
        budget.spend(size as u64)?;
        Ok((bi, bj, size))
    }

    /// All common blocks in order, adjacent ones joined.
    pub fn blocks(&self, a: &[char], budget: &mut Budget) -> Result<Vec<Block>, Exhausted> {
        let mut queue = vec![(0, a.len(), 0, self.b.len())];
        let mut found = Vec::new();
        while let Some(range) = queue.pop() {
            let (alo, ahi, blo, bhi) = range;
            let (i, j, k) = self.longest(a, range, budget)?;
            if k > 0 {
                found.push((i, j, k));
                if alo < i && blo < j {
                    queue.push((alo, i, blo, j));
                }
                if i + k < ahi && j + k < bhi {
                    queue.push((i + k, ahi, j + k, bhi));
                }
            }
        }
        found.sort_unstable();
        let mut joined: Vec<Block> = Vec::with_capacity(found.len());
        for (i, j, k) in found {
            match joined.last_mut() {
                Some(last) if last.0 + last.2 == i && last.1 + last.2 == j => last.2 += k,
                _ => joined.push((i, j, k)),
            }
        }
        Ok(joined)
    }

    /// The edit steps from `a` to `b`, as `(op, a0, a1, b0, b1)`.
    pub fn ops(&self, a: &[char], budget: &mut Budget) -> Result<Vec<Step>, Exhausted> {
        let mut blocks = self.blocks(a, budget)?;
        blocks.push((a.len(), self.b.len(), 0));
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        for (ai, bj, size) in blocks {
            let op = match (i < ai, j < bj) {
                (true, true) => Some(Op::Replace),
                (true, false) => Some(Op::Delete),
                (false, true) => Some(Op::Insert),
                (false, false) => None,
            };
            if let Some(op) = op {
                out.push((op, i, ai, j, bj));
            }
            (i, j) = (ai + size, bj + size);
            if size > 0 {
                out.push((Op::Equal, ai, i, bj, j));
            }
        }
        Ok(out)
    }
}

/// `2 * M / T`, as the reference computes it, for `M` matched elements
/// and `T` elements in all.
fn ratio_of(matched: usize, total: usize) -> f64 {
    if total == 0 {
        1.0
    } else {
        2.0 * matched as f64 / total as f64
    }
}

/// The similarity of `a` and `b` in `0.0..=1.0`.
pub fn ratio(a: &[char], b: &[char], budget: &mut Budget) -> Result<f64, Exhausted> {
    let matcher = Matcher::new(b, budget)?;
    let matched = matcher.blocks(a, budget)?.iter().map(|&(_, _, k)| k).sum();
    Ok(ratio_of(matched, a.len() + b.len()))
}

/// The similarity of `a` and `b` when it is at least `floor`, else `None`;
/// cheap upper bounds (lengths, then shared elements) rule out most pairs
/// before the full measure, with the same answer.
pub fn ratio_at_least(
    a: &[char],
    b: &[char],
    floor: f64,
    budget: &mut Budget,
) -> Result<Option<f64>, Exhausted> {
    let total = a.len() + b.len();
    if ratio_of(a.len().min(b.len()), total) < floor {
        return Ok(None);
    }
    budget.spend(total as u64)?;
    let shared = if a.iter().chain(b).all(char::is_ascii) {
        // The common case, without a map.
        let mut counts = [0isize; 128];
        b.iter().for_each(|&c| counts[c as usize] += 1);
        a.iter()
            .filter(|&&c| {
                let n = &mut counts[c as usize];
                *n -= 1;
                *n >= 0
            })
            .count()
    } else {
        let mut counts: HashMap<char, isize> = HashMap::new();
        b.iter().for_each(|&c| *counts.entry(c).or_default() += 1);
        a.iter()
            .filter(|&&c| {
                let n = counts.entry(c).or_default();
                *n -= 1;
                *n >= 0
            })
            .count()
    };
    if ratio_of(shared, total) < floor {
        return Ok(None);
    }
    let r = ratio(a, b, budget)?;
    Ok((r >= floor).then_some(r))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    fn r(a: &str, b: &str) -> f64 {
        ratio(&chars(a), &chars(b), &mut Budget::new(u64::MAX)).unwrap()
    }

    // Values observed from Python 3.11's difflib on the same pairs.
    #[test]
    fn ratios_match_difflib() {
        assert_eq!(r("", ""), 1.0);
        assert_eq!(r("abcd", "bcde"), 0.75);
        assert_eq!(r("def foo():", "def fooo():"), 0.9523809523809523);
        assert_eq!(r("return x", "return y + 1"), 0.7);
        assert_eq!(r("qabxcd", "abycdf"), 0.6666666666666666);
    }

    #[test]
    fn autojunk_changes_long_b() {
        // 'a' is in more than 1% of a 300-long b: it is not indexed, yet
        // the empty block at the start still widens over equal elements.
        let b = "a".repeat(300);
        assert_eq!(r("aaa", &b), 0.019801980198019802);
        assert_eq!(r("baaa", &b), 0.0);
        let b2 = format!("x{}", "a".repeat(299));
        assert_eq!(r("xaa", &b2), 0.019801980198019802);
    }

    #[test]
    fn ops_turn_a_into_b() {
        let (a, b) = (chars("qabxcd"), chars("abycdf"));
        let m = Matcher::new(&b, &mut Budget::new(u64::MAX)).unwrap();
        let ops = m.ops(&a, &mut Budget::new(u64::MAX)).unwrap();
        assert_eq!(
            ops,
            vec![
                (Op::Delete, 0, 1, 0, 0),
                (Op::Equal, 1, 3, 0, 2),
                (Op::Replace, 3, 4, 2, 3),
                (Op::Equal, 4, 6, 3, 5),
                (Op::Insert, 6, 6, 5, 6),
            ]
        );
    }

    #[test]
    fn budget_stops_work() {
        let a = chars(&"ab".repeat(5000));
        let b = chars(&"ba".repeat(5000));
        assert_eq!(ratio(&a, &b, &mut Budget::new(1000)), Err(Exhausted));
    }
}
