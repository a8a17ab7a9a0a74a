//! [`Prune`]: why the search ruled a candidate (one strategy for one op in one partial plan) out.

use std::fmt;

/// Why a candidate was ruled out. The memory refusals say by how much.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Prune {
    /// A product's weights and result exceed the interleaved region's share of a tile.
    #[error("needs {needed} bytes of interleaved memory on a tile (budget {budget}, {} over)", needed.saturating_sub(u64::from(*budget)))]
    Interleaved { needed: u64, budget: u32 },
    /// Pinned weights and program, the op's working set and the weights later ops pin exceed
    /// the tile's budget.
    #[error("{}", Sram::from(self))]
    Sram {
        pinned: u64,
        working: u64,
        to_come: u64,
        budget: u32,
    },
    /// The cost model cannot price the candidate (a kernel or a movement refuses its layouts).
    #[error("cannot be priced: {0}")]
    Unpriced(String),
}

impl Prune {
    /// Whether the candidate was ruled out for memory (what an SRAM-saving search can answer).
    pub fn is_memory(&self) -> bool {
        match self {
            Prune::Interleaved { .. } | Prune::Sram { .. } => true,
            Prune::Unpriced(_) => false,
        }
    }
}

impl From<String> for Prune {
    fn from(reason: String) -> Prune {
        Prune::Unpriced(reason)
    }
}

impl From<&str> for Prune {
    fn from(reason: &str) -> Prune {
        Prune::Unpriced(reason.to_string())
    }
}

/// The text of [`Prune::Sram`].
struct Sram<'a>(&'a Prune);

impl<'a> From<&'a Prune> for Sram<'a> {
    fn from(p: &'a Prune) -> Sram<'a> {
        Sram(p)
    }
}

impl fmt::Display for Sram<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Prune::Sram {
            pinned,
            working,
            to_come,
            budget,
        } = self.0
        else {
            return Ok(());
        };
        let needed = (pinned + working + to_come).max(pinned + to_come);
        write!(
            f,
            "needs {pinned} bytes of weights and program, {working} working bytes and {to_come} bytes of later ops' weights on a tile (budget {budget}, {} over)",
            needed.saturating_sub(u64::from(*budget))
        )
    }
}

/// A list of refusals, each once, readably: `n× reason` for repeats, one per line.
pub fn describe(reasons: &[Prune]) -> String {
    let mut counted: Vec<(&Prune, usize)> = Vec::new();
    for r in reasons {
        match counted.iter_mut().find(|(p, _)| *p == r) {
            Some((_, n)) => *n += 1,
            None => counted.push((r, 1)),
        }
    }
    counted
        .iter()
        .map(|(r, n)| {
            if *n > 1 {
                format!("\n  - {n}× {r}")
            } else {
                format!("\n  - {r}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_say_by_how_much_and_repeats_are_counted() {
        let sram = Prune::Sram {
            pinned: 300,
            working: 250,
            to_come: 10,
            budget: 500,
        };
        assert!(
            sram.to_string().ends_with("(budget 500, 60 over)"),
            "{sram}"
        );
        let inter = Prune::Interleaved {
            needed: 400,
            budget: 393,
        };
        assert!(inter.to_string().contains("7 over"), "{inter}");
        assert!(sram.is_memory() && inter.is_memory());
        assert!(!Prune::from("no kernel").is_memory());
        let text = describe(&[sram.clone(), inter.clone(), sram]);
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.contains("2× needs 300"), "{text}");
    }
}
