//! Text rules of macros, as GNU as has them: words, arguments, parameters and substitution.
//!
//! Arguments are separated by commas or blanks; a blank between an operand and an operator
//! (`a + 1`) does not separate, nor does anything inside parentheses. A double-quoted argument
//! loses its quotes (`"(\from+1)"` passes `(\from+1)`). In a body, `\name` is the argument of
//! parameter `name` (the longest name of `[A-Za-z0-9_.$]` after the `\`; other names stay as
//! written, for an inner `.irp`), `\()` is nothing and `\@` the number of macros run before.

/// Characters of names (symbols, directives, parameters).
pub fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'
}

fn is_operator(c: char) -> bool {
    "+-*/%<>&|^=~!".contains(c)
}

/// The first word of a line: its byte range. `None` for a blank line.
pub fn first_word(text: &str) -> Option<(usize, usize)> {
    let start = text.len() - text.trim_start().len();
    let end = text[start..]
        .find(|c: char| !is_word_char(c))
        .map_or(text.len(), |k| start + k);
    (end > start).then_some((start, end))
}

/// A label written first on a line (`name:` but not `name::`): the byte index after the colon.
pub fn leading_label(text: &str) -> Option<usize> {
    let (_, end) = first_word(text)?;
    let rest = &text[end..];
    (rest.starts_with(':') && !rest.starts_with("::")).then_some(end + 1)
}

/// One argument as written at an invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// `name=` before the value, if given by name.
    pub name: Option<String>,
    pub value: String,
}

/// Reads a double-quoted string starting at `chars[*i] == '"'`; returns its content (a `\"` or
/// `""` inside is one `"`) or `None` if it never ends.
fn quoted(chars: &[char], i: &mut usize) -> Option<String> {
    let mut out = String::new();
    *i += 1;
    while *i < chars.len() {
        let c = chars[*i];
        if (c == '\\' || c == '"') && chars.get(*i + 1) == Some(&'"') {
            out.push('"');
            *i += 2;
        } else if c == '"' {
            *i += 1;
            return Some(out);
        } else {
            out.push(c);
            *i += 1;
        }
    }
    None
}

fn skip_blanks(chars: &[char], i: &mut usize) {
    while *i < chars.len() && chars[*i].is_whitespace() {
        *i += 1;
    }
}

/// Reads one argument value (not a `name=`): quoted, or up to a separator at depth 0.
fn value(chars: &[char], i: &mut usize) -> Result<String, String> {
    if chars.get(*i) == Some(&'"') {
        return quoted(chars, i).ok_or_else(|| "unterminated string in the arguments".to_string());
    }
    let mut out = String::new();
    let mut depth = 0u32;
    while *i < chars.len() {
        let c = chars[*i];
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => break,
            '"' => {
                // A string inside an argument stays as written, quotes and all.
                let start = *i;
                if quoted(chars, i).is_none() {
                    return Err("unterminated string in the arguments".to_string());
                }
                out.extend(&chars[start..*i]);
                continue;
            }
            c if c.is_whitespace() && depth == 0 => {
                let mut j = *i;
                skip_blanks(chars, &mut j);
                let before = out.chars().last();
                let after = chars.get(j).copied();
                let joins = after.is_some_and(|a| a != ',')
                    && (before.is_some_and(is_operator) || after.is_some_and(is_operator));
                if !joins {
                    break;
                }
                out.push(' ');
                *i = j;
                continue;
            }
            _ => {}
        }
        out.push(c);
        *i += 1;
    }
    Ok(out)
}

/// Splits the text after a macro name (or a `.macro` header's name) into arguments.
/// `vararg_from`: given the positional index reached, whether that parameter takes the rest.
pub fn split_args(
    text: &str,
    named: &dyn Fn(&str) -> bool,
    vararg_at: &dyn Fn(usize) -> bool,
) -> Result<Vec<Arg>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut out: Vec<Arg> = Vec::new();
    let mut positional = 0usize;
    loop {
        skip_blanks(&chars, &mut i);
        if i >= chars.len() {
            return Ok(out);
        }
        if vararg_at(positional) {
            let rest: String = chars[i..].iter().collect();
            out.push(Arg {
                name: None,
                value: rest.trim_end().to_string(),
            });
            return Ok(out);
        }
        if chars[i] == ',' {
            out.push(Arg {
                name: None,
                value: String::new(),
            });
            positional += 1;
            i += 1;
            continue;
        }
        // `name=value` (not `==`) where `name` is a parameter.
        let word_end = (i..chars.len())
            .find(|&k| !is_word_char(chars[k]))
            .unwrap_or(chars.len());
        let mut eq = word_end;
        skip_blanks(&chars, &mut eq);
        let word: String = chars[i..word_end].iter().collect();
        let is_named = word_end > i
            && chars.get(eq) == Some(&'=')
            && chars.get(eq + 1) != Some(&'=')
            && named(&word);
        let name = if is_named {
            i = eq + 1;
            skip_blanks(&chars, &mut i);
            Some(word)
        } else {
            None
        };
        let value = value(&chars, &mut i)?;
        if name.is_none() {
            positional += 1;
        }
        out.push(Arg { name, value });
        skip_blanks(&chars, &mut i);
        if chars.get(i) == Some(&',') {
            i += 1;
        }
    }
}

/// One parameter of a macro definition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub default: Option<String>,
    pub required: bool,
    pub vararg: bool,
}

/// Parses the parameters of `.macro NAME params` (the text after the name).
pub fn parse_params(text: &str) -> Result<Vec<Param>, String> {
    let pieces = split_args(text, &|_| false, &|_| false)?;
    let mut params: Vec<Param> = Vec::new();
    for piece in pieces {
        let spec = piece.value.trim();
        if spec.is_empty() {
            return Err("empty parameter name".to_string());
        }
        let (head, default) = match spec.split_once('=') {
            Some((head, default)) => {
                let default = default.trim();
                let default = match default.strip_prefix('"').and_then(|d| d.strip_suffix('"')) {
                    Some(inner) => inner.to_string(),
                    None => default.to_string(),
                };
                (head.trim(), Some(default))
            }
            None => (spec, None),
        };
        let (name, qualifier) = match head.split_once(':') {
            Some((name, qualifier)) => (name.trim(), Some(qualifier.trim())),
            None => (head, None),
        };
        if !name.chars().all(is_word_char) || name.is_empty() {
            return Err(format!("bad parameter name `{name}`"));
        }
        let (required, vararg) = match qualifier {
            None => (false, false),
            Some("req") => (true, false),
            Some("vararg") => (false, true),
            Some(other) => {
                return Err(format!(
                    "unknown qualifier `:{other}` of parameter `{name}` (use `:req` or `:vararg`)"
                ))
            }
        };
        if params.iter().any(|p| p.name == name) {
            return Err(format!("parameter `{name}` is named twice"));
        }
        if params.last().is_some_and(|p| p.vararg) {
            return Err("a `:vararg` parameter must be the last".to_string());
        }
        params.push(Param {
            name: name.to_string(),
            default,
            required,
            vararg,
        });
    }
    Ok(params)
}

/// Substitutes `\name` (names bound in `bindings`), `\()` and, with a number, `\@`.
/// `None` if the result would be longer than `limit` bytes.
pub fn substitute(
    text: &str,
    bindings: &[(String, String)],
    number: Option<u64>,
    limit: usize,
) -> Option<String> {
    if !text.contains('\\') {
        return (text.len() <= limit).then(|| text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c != '\\' {
            out.push(c);
            i += 1;
            continue;
        }
        if chars.get(i + 1) == Some(&'(') && chars.get(i + 2) == Some(&')') {
            i += 3;
            continue;
        }
        if chars.get(i + 1) == Some(&'@') {
            if let Some(n) = number {
                out.push_str(&n.to_string());
                i += 2;
                continue;
            }
        }
        let end = (i + 1..chars.len())
            .find(|&k| !is_word_char(chars[k]))
            .unwrap_or(chars.len());
        let name: String = chars[i + 1..end].iter().collect();
        match bindings.iter().find(|(n, _)| *n == name) {
            Some((_, value)) if !name.is_empty() => {
                if out.len() + value.len() > limit {
                    return None;
                }
                out.push_str(value);
                i = end;
            }
            _ => {
                out.push('\\');
                i += 1;
            }
        }
    }
    (out.len() <= limit).then_some(out)
}

/// The two strings of `.ifc a, b`: each quoted (`""` is a quote inside) or bare; a bare first
/// string ends at the first comma, a bare second one at the end of the line; blanks around
/// bare strings are dropped.
pub fn two_strings(text: &str) -> Result<(String, String), String> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    skip_blanks(&chars, &mut i);
    let first = if chars.get(i) == Some(&'"') {
        let s = quoted(&chars, &mut i).ok_or("unterminated string")?;
        skip_blanks(&chars, &mut i);
        if chars.get(i) != Some(&',') {
            return Err("expected `,` after the first string".to_string());
        }
        i += 1;
        s
    } else {
        let comma = (i..chars.len())
            .find(|&k| chars[k] == ',')
            .ok_or("expected two strings separated by `,`")?;
        let s: String = chars[i..comma].iter().collect();
        i = comma + 1;
        s.trim().to_string()
    };
    skip_blanks(&chars, &mut i);
    let second = if chars.get(i) == Some(&'"') {
        let s = quoted(&chars, &mut i).ok_or("unterminated string")?;
        skip_blanks(&chars, &mut i);
        if i < chars.len() {
            return Err("unexpected text after the second string".to_string());
        }
        s
    } else {
        chars[i..].iter().collect::<String>().trim().to_string()
    };
    Ok((first, second))
}

/// The text of `.error`/`.warning`: the string's content, or the text as written.
pub fn message_text(text: &str) -> Option<String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    let chars: Vec<char> = trimmed.chars().collect();
    if chars[0] == '"' {
        let mut i = 0;
        if let Some(s) = quoted(&chars, &mut i) {
            if i == chars.len() {
                return Some(s);
            }
        }
    }
    Some(trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<String> {
        split_args(text, &|n| n == "b", &|_| false)
            .unwrap()
            .into_iter()
            .map(|a| match a.name {
                Some(n) => format!("{n}={}", a.value),
                None => a.value,
            })
            .collect()
    }

    #[test]
    fn arguments_split_at_commas_and_blanks() {
        assert_eq!(values("1, 2 3"), ["1", "2", "3"]);
        assert_eq!(values("$m1 + 4, (2 3)"), ["$m1 + 4", "(2 3)"]);
        assert_eq!(values(",x"), ["", "x"]);
        assert_eq!(values("\"a, b\" b=7"), ["a, b", "b=7"]);
        assert_eq!(values("a==b"), ["a==b"]);
        assert_eq!(values("c=1"), ["c=1"]);
    }

    #[test]
    fn vararg_takes_the_rest() {
        let args = split_args("x, a, b  c", &|_| false, &|k| k == 1).unwrap();
        assert_eq!(args[1].value, "a, b  c");
    }

    #[test]
    fn params_parse_qualifiers_and_defaults() {
        let params = parse_params("a, b=3 c:req, d:vararg").unwrap();
        assert_eq!(params[1].default.as_deref(), Some("3"));
        assert!(params[2].required && params[3].vararg);
        assert!(parse_params("a:vararg, b").is_err());
        assert!(parse_params("a, a").is_err());
        assert!(parse_params("a:opt").is_err());
    }

    #[test]
    fn substitution_takes_whole_names() {
        let b = vec![("x".to_string(), "$m1".to_string())];
        let sub = |text: &str, n| substitute(text, &b, n, 100).unwrap();
        assert_eq!(sub(r"\x \xy \x\()y L\@", Some(3)), r"$m1 \xy $m1y L3");
        assert_eq!(sub(r"L\@", None), r"L\@");
        assert_eq!(substitute(r"\x\x", &b, None, 5), None);
    }

    #[test]
    fn ifc_strings_follow_the_quoting_rules() {
        assert_eq!(
            two_strings(" a , b c ").unwrap(),
            ("a".into(), "b c".into())
        );
        assert_eq!(
            two_strings(r#""a, ""q""", b"#).unwrap(),
            ("a, \"q\"".into(), "b".into())
        );
        assert!(two_strings("a").is_err());
    }
}
