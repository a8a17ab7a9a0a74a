//! Conditional assembly: the `.if` family, `.else`, `.elseif`, `.endif` as a stack of open blocks.
//!
//! A block inside a skipped one is skipped whatever its condition (and its condition is not
//! evaluated); `.elseif` and `.else` take effect only if no earlier branch of their block did.

use crate::asm::lexer::Pos;

/// The directives that open a block, with what they test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// `.if`, `.ifne`: expression is not zero.
    NonZero,
    /// `.ifeq`: expression is zero.
    Zero,
    /// `.iflt`, `.ifle`, `.ifgt`, `.ifge`: expression compared with zero.
    Less,
    LessEq,
    Greater,
    GreaterEq,
    /// `.ifdef`, `.ifndef`/`.ifnotdef`.
    Defined(bool),
    /// `.ifc`/`.ifeqs`, `.ifnc`/`.ifnes`: the two strings are equal (true) or differ (false).
    Same(bool),
    /// `.ifb`, `.ifnb`: the text is blank (true) or not (false).
    Blank(bool),
}

impl Test {
    /// The test of an opening directive, if `word` is one.
    pub fn of(word: &str) -> Option<Test> {
        Some(match word {
            ".if" | ".ifne" => Test::NonZero,
            ".ifeq" => Test::Zero,
            ".iflt" => Test::Less,
            ".ifle" => Test::LessEq,
            ".ifgt" => Test::Greater,
            ".ifge" => Test::GreaterEq,
            ".ifdef" => Test::Defined(true),
            ".ifndef" | ".ifnotdef" => Test::Defined(false),
            ".ifc" | ".ifeqs" => Test::Same(true),
            ".ifnc" | ".ifnes" => Test::Same(false),
            ".ifb" => Test::Blank(true),
            ".ifnb" => Test::Blank(false),
            _ => return None,
        })
    }

    /// Applies a numeric test to a value.
    pub fn holds(self, value: i64) -> bool {
        match self {
            Test::NonZero => value != 0,
            Test::Zero => value == 0,
            Test::Less => value < 0,
            Test::LessEq => value <= 0,
            Test::Greater => value > 0,
            Test::GreaterEq => value >= 0,
            Test::Defined(_) | Test::Same(_) | Test::Blank(_) => value != 0,
        }
    }

    pub fn is_numeric(self) -> bool {
        match self {
            Test::NonZero
            | Test::Zero
            | Test::Less
            | Test::LessEq
            | Test::Greater
            | Test::GreaterEq => true,
            Test::Defined(_) | Test::Same(_) | Test::Blank(_) => false,
        }
    }
}

#[derive(Clone, Debug)]
struct Block {
    /// Whether the enclosing text is assembled.
    outer: bool,
    /// Whether a branch of this block has been taken.
    taken: bool,
    /// Whether the current branch is assembled.
    now: bool,
    else_seen: bool,
    /// The opening directive (for "never ended" errors).
    at: Pos,
}

/// The open blocks, outermost first.
#[derive(Clone, Debug, Default)]
pub struct Conditions {
    blocks: Vec<Block>,
}

/// What went wrong with `.else`/`.elseif`/`.endif`.
pub type Misplaced = &'static str;

impl Conditions {
    /// Whether text here is assembled.
    pub fn active(&self) -> bool {
        self.blocks.last().is_none_or(|b| b.now)
    }

    pub fn depth(&self) -> usize {
        self.blocks.len()
    }

    /// Opens a block; `value` is only asked for when the enclosing text is assembled.
    pub fn open(&mut self, at: Pos, value: impl FnOnce() -> bool) {
        let outer = self.active();
        let now = outer && value();
        self.blocks.push(Block {
            outer,
            taken: now,
            now,
            else_seen: false,
            at,
        });
    }

    /// Whether an `.elseif` here needs its condition evaluated.
    pub fn elseif_needs_value(&self) -> bool {
        self.blocks
            .last()
            .is_some_and(|b| b.outer && !b.taken && !b.else_seen)
    }

    pub fn elseif(&mut self, value: bool) -> Result<(), Misplaced> {
        let block = self.blocks.last_mut().ok_or("`.elseif` without `.if`")?;
        if block.else_seen {
            return Err("`.elseif` after `.else`");
        }
        block.now = block.outer && !block.taken && value;
        block.taken |= block.now;
        Ok(())
    }

    pub fn otherwise(&mut self) -> Result<(), Misplaced> {
        let block = self.blocks.last_mut().ok_or("`.else` without `.if`")?;
        if block.else_seen {
            return Err("`.else` twice in one `.if`");
        }
        block.else_seen = true;
        block.now = block.outer && !block.taken;
        block.taken = true;
        Ok(())
    }

    pub fn end(&mut self) -> Result<(), Misplaced> {
        self.blocks
            .pop()
            .map(|_| ())
            .ok_or("`.endif` without `.if`")
    }

    /// Closes the blocks opened beyond `depth`; returns where each was opened.
    pub fn truncate(&mut self, depth: usize) -> Vec<Pos> {
        let cut = self.blocks.len().min(depth);
        self.blocks.drain(cut..).map(|b| b.at).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branches_take_the_first_true_condition() {
        let mut c = Conditions::default();
        c.open(Pos::at(1, 1), || false);
        assert!(!c.active());
        assert!(c.elseif_needs_value());
        c.elseif(true).unwrap();
        assert!(c.active());
        assert!(!c.elseif_needs_value());
        c.otherwise().unwrap();
        assert!(!c.active());
        assert_eq!(c.otherwise(), Err("`.else` twice in one `.if`"));
        c.end().unwrap();
        assert_eq!(c.end(), Err("`.endif` without `.if`"));
    }

    #[test]
    fn inner_blocks_of_skipped_text_are_skipped() {
        let mut c = Conditions::default();
        c.open(Pos::at(1, 1), || false);
        c.open(Pos::at(2, 1), || panic!("not evaluated"));
        c.otherwise().unwrap();
        assert!(!c.active());
    }
}
