//! Source lines for the expansion stage: comments blanked (columns kept), `#` lines joined at `\`.
//!
//! `/* ... */`, `//` and `#` comments (a `#` that is not the first non-blank character of its
//! line) become spaces, so every remaining character keeps its line and column; a comment over
//! several lines leaves the lines it spans in place. Comment characters inside double-quoted
//! strings are text. A preprocessor line (`#` first) ending in `\` continues on the next line,
//! as the C preprocessor joins it; the lines it swallows yield no line of their own.

use super::error::{make, AsmError, Loc};

/// One logical line: the 1-based line it starts on and its text (no newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SrcLine {
    pub line: u32,
    pub text: String,
}

impl SrcLine {
    /// Whether the line is a preprocessor line (`#` is its first non-blank character).
    pub fn is_preprocessor(&self) -> bool {
        self.text.trim_start().starts_with('#')
    }
}

/// Splits `text` into lines with comments blanked. An unterminated `/*` is reported once.
pub fn scrub(file: &str, text: &str, errors: &mut Vec<AsmError>) -> Vec<SrcLine> {
    let chars: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut line_no: u32 = 1;
    let mut start_line: u32 = 1;
    let mut col: u32 = 1;
    let mut in_string = false;
    // Where an open block comment started, if inside one.
    let mut block: Option<(u32, u32)> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            let preprocessor = current.trim_start().starts_with('#');
            let trimmed_len = current.trim_end_matches('\r').len();
            if block.is_none() && preprocessor && current[..trimmed_len].ends_with('\\') {
                // Continuation of a preprocessor line: drop the `\`, keep going on this line.
                current.truncate(trimmed_len - 1);
                current.push(' ');
            } else {
                lines.push(SrcLine {
                    line: start_line,
                    text: std::mem::take(&mut current),
                });
                start_line = line_no + 1;
            }
            in_string = false;
            line_no += 1;
            col = 1;
            i += 1;
            continue;
        }
        if block.is_some() {
            if c == '*' && next == Some('/') {
                block = None;
                current.push_str("  ");
                i += 2;
                col += 2;
            } else {
                current.push(if c == '\t' { '\t' } else { ' ' });
                i += 1;
                col += 1;
            }
            continue;
        }
        if in_string {
            current.push(c);
            if c == '\\' && next.is_some_and(|n| n != '\n') {
                current.push(chars[i + 1]);
                i += 2;
                col += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
            i += 1;
            col += 1;
            continue;
        }
        let line_comment = (c == '/' && next == Some('/'))
            || (c == '#' && !current.trim().is_empty() && !current.trim_start().starts_with('#'));
        if line_comment {
            while i < chars.len() && chars[i] != '\n' {
                current.push(' ');
                i += 1;
                col += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            block = Some((line_no, col));
            current.push_str("  ");
            i += 2;
            col += 2;
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        current.push(c);
        i += 1;
        col += 1;
    }
    if let Some((line, col)) = block {
        errors.push(make::UnterminatedComment(
            Loc::new(file, line, col),
            "unterminated comment: `/*` has no matching `*/`",
        ));
    }
    if !current.is_empty() {
        lines.push(SrcLine {
            line: start_line,
            text: current,
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(text: &str) -> Vec<(u32, String)> {
        let mut errors = Vec::new();
        let out = scrub("t.S", text, &mut errors);
        assert!(errors.is_empty(), "{errors:?}");
        out.into_iter().map(|l| (l.line, l.text)).collect()
    }

    #[test]
    fn comments_become_blanks_and_lines_stay() {
        assert_eq!(
            texts("a /* x\ny */ b // c\n\"//\" # d\n#define X 1 \\\n  + 2\nz"),
            vec![
                (1, "a     ".to_string()),
                (2, "     b     ".to_string()),
                (3, "\"//\"    ".to_string()),
                (4, "#define X 1    + 2".to_string()),
                (6, "z".to_string()),
            ]
        );
    }

    #[test]
    fn unterminated_block_comment_is_an_error() {
        let mut errors = Vec::new();
        scrub("t.S", "a\n /* b\n", &mut errors);
        assert_eq!(
            errors[0].to_string(),
            "t.S:2:2: error[E-ASM-002]: unterminated comment: `/*` has no matching `*/`"
        );
    }
}
