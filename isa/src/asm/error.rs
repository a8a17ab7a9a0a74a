//! Assembler diagnostics: one typed error per problem, each with an id, a source location and a message.

use super::lexer::Pos;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// A position in a source file: file name, 1-based line and 1-based column (in characters).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Loc {
    pub file: String,
    pub line: u32,
    pub col: u32,
    /// The macro or `.rept` expansion the text came from (0: written in the file). The
    /// assembler names the invocations in the message; this keeps the number for tools.
    #[serde(default)]
    pub ctx: u32,
}

impl Loc {
    pub fn new(file: &str, line: u32, col: u32) -> Loc {
        Loc {
            file: file.to_string(),
            line,
            col,
            ctx: 0,
        }
    }

    /// The location of a lexer position (with its expansion context) in `file`.
    pub fn at(file: &str, pos: Pos) -> Loc {
        Loc {
            file: file.to_string(),
            line: pos.line,
            col: pos.col,
            ctx: pos.ctx,
        }
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

macro_rules! asm_errors {
    ($( $(#[doc = $doc:literal])* $variant:ident = $id:literal; )*) => {
        /// One assembler diagnostic. Displays as `file:line:col: error[E-ASM-0xx]: message`.
        #[derive(Clone, Debug, PartialEq, Eq, Error, Serialize, Deserialize)]
        pub enum AsmError {
            $(
                $(#[doc = $doc])*
                #[error("{loc}: error[{id}]: {message}", id = $id)]
                $variant { loc: Loc, message: String },
            )*
        }

        impl AsmError {
            /// The stable id, e.g. `E-ASM-004`.
            pub fn id(&self) -> &'static str {
                match self { $( AsmError::$variant { .. } => $id, )* }
            }

            pub fn loc(&self) -> &Loc {
                match self { $( AsmError::$variant { loc, .. } => loc, )* }
            }

            pub fn message(&self) -> &str {
                match self { $( AsmError::$variant { message, .. } => message, )* }
            }

            /// Adds text to the message (the assembler's note of the macro invocations).
            pub fn append_to_message(&mut self, text: &str) {
                match self { $( AsmError::$variant { message, .. } => message.push_str(text), )* }
            }
        }

        /// Constructors: `AsmError::syntax(loc, message)` and so on.
        #[allow(non_snake_case)]
        pub mod make {
            use super::{AsmError, Loc};
            $(
                pub fn $variant(loc: Loc, message: impl Into<String>) -> AsmError {
                    AsmError::$variant { loc, message: message.into() }
                }
            )*
        }
    };
}

asm_errors! {
    /// Malformed token or statement: bad number, unexpected character or token, unterminated string.
    Syntax = "E-ASM-001";
    /// A `/*` comment that never ends.
    UnterminatedComment = "E-ASM-002";
    /// A preprocessor line the assembler does not handle (only object-like `#define`).
    Preprocessor = "E-ASM-003";
    /// No instruction row has this mnemonic.
    UnknownMnemonic = "E-ASM-004";
    /// The operands match no row of the mnemonic.
    OperandMismatch = "E-ASM-005";
    /// An immediate, address or CSR index does not fit its field.
    OutOfRange = "E-ASM-006";
    /// A register, pair or quad that is unknown, misaligned or malformed.
    BadRegister = "E-ASM-007";
    /// A symbol (or local label) that is never defined.
    UndefinedSymbol = "E-ASM-008";
    /// A symbol defined twice.
    DuplicateSymbol = "E-ASM-009";
    /// A bundle that cannot be issued: two instructions of one pipeline, a solo instruction, wrong size.
    BadBundle = "E-ASM-010";
    /// Code that is not aligned: an instruction not on 4 bytes, an `rpt` body not on 8.
    Misaligned = "E-ASM-011";
    /// A directive the assembler does not know.
    UnknownDirective = "E-ASM-012";
    /// A known directive with bad arguments.
    BadDirective = "E-ASM-013";
    /// An expression that cannot be evaluated: division by zero, bad shift, not constant, circular.
    BadExpression = "E-ASM-014";
    /// Section placement problems: overlaps, bad placements, sections too large.
    Layout = "E-ASM-015";
    /// An instruction that the context the code is marked for (`.worker`/`.supervisor`) cannot execute.
    WrongContext = "E-ASM-016";
    /// The encoder rejected an instruction the assembler accepted (an internal inconsistency).
    Encoding = "E-ASM-017";
    /// A bad `.macro` definition, `.endm`/`.endr` without a start, a body that never ends, a
    /// macro defined twice or `.purgem` of an unknown macro.
    MacroDefinition = "E-ASM-018";
    /// A macro invocation whose arguments do not fit the definition: a missing `:req`
    /// argument, too many arguments, an unknown or repeated named argument.
    MacroArgument = "E-ASM-019";
    /// An expansion bound was hit: macro nesting depth, total expanded lines, `.rept` count.
    ExpansionLimit = "E-ASM-020";
    /// Conditional assembly out of order (`.else`/`.endif` without `.if`, `.if` never ended)
    /// or a condition with bad arguments.
    Conditional = "E-ASM-021";
    /// The source asked for an error: `.error "message"`.
    UserError = "E-ASM-022";
}

/// A diagnostic that does not stop the assembly (`.warning`). Displays as `file:line:col: warning: message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsmWarning {
    pub loc: Loc,
    pub message: String,
}

impl fmt::Display for AsmWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: warning: {}", self.loc, self.message)
    }
}

/// All diagnostics of one assembly, in source order (file order, then line, then column).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsmErrors(pub Vec<AsmError>);

impl AsmErrors {
    pub fn iter(&self) -> impl Iterator<Item = &AsmError> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for AsmErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for AsmErrors {}

impl From<AsmError> for AsmErrors {
    fn from(error: AsmError) -> AsmErrors {
        AsmErrors(vec![error])
    }
}
