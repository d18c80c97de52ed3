//! A step's templates (`{{name}}` for a CSV column or an extracted value),
//! compiled once into literal runs and variable indices so that writing one
//! into a request buffer is copies only. `{{` without a closing `}}` and an
//! unknown name are refused when the plan is built, never at send time.

use std::ops::Range;

/// One piece of a compiled template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    /// Bytes of `Template::text`.
    Literal(Range<usize>),
    /// The value of variable `n` (an index into the script's variable names).
    Var(usize),
}

/// A compiled template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    text: String,
    segments: Vec<Segment>,
}

/// Why a template does not compile; the caller names where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// `{{` with no `}}` after it.
    Unclosed,
    /// `{{name}}` names no CSV column and no value extracted by an earlier step.
    Unknown(String),
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unclosed => f.write_str("'{{' without a closing '}}'"),
            // Not `{{name}}`: a caller renders `{key}` placeholders in the messages it is given.
            Self::Unknown(name) => write!(f, "'{name}' is no CSV column and no value an earlier step extracts"),
        }
    }
}

/// The values a template reads, by variable index.
pub trait Values {
    /// The current value of variable `n`.
    fn value(&self, n: usize) -> &[u8];
}

impl Template {
    /// Compiles `source`; `known(name)` gives a name's variable index, or None
    /// when no earlier step or CSV column defines it.
    pub fn compile(source: &str, known: impl Fn(&str) -> Option<usize>) -> Result<Self, TemplateError> {
        let mut segments = Vec::new();
        let mut text = String::new();
        let mut rest = source;
        while let Some(open) = rest.find("{{") {
            push_literal(&mut text, &mut segments, &rest[..open]);
            let after = &rest[open + 2..];
            let close = after.find("}}").ok_or(TemplateError::Unclosed)?;
            let name = after[..close].trim();
            let n = known(name).ok_or_else(|| TemplateError::Unknown(name.to_string()))?;
            segments.push(Segment::Var(n));
            rest = &after[close + 2..];
        }
        push_literal(&mut text, &mut segments, rest);
        Ok(Self { text, segments })
    }

    /// The variables it reads, in order (repeats included).
    pub fn variables(&self) -> impl Iterator<Item = usize> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Var(n) => Some(*n),
            Segment::Literal(_) => None,
        })
    }

    /// Whether it has no variable: the same bytes every time.
    pub fn is_constant(&self) -> bool {
        self.variables().next().is_none()
    }

    /// Bytes it writes with `values`.
    pub fn len(&self, values: &impl Values) -> usize {
        self.segments
            .iter()
            .map(|s| match s {
                Segment::Literal(r) => r.len(),
                Segment::Var(n) => values.value(*n).len(),
            })
            .sum()
    }

    /// Whether it writes nothing whatever the values (the empty template).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// Appends its text with `values` to `out` (no allocation when `out` has room).
    pub fn write(&self, out: &mut Vec<u8>, values: &impl Values) {
        for s in &self.segments {
            match s {
                Segment::Literal(r) => out.extend_from_slice(&self.text.as_bytes()[r.clone()]),
                Segment::Var(n) => out.extend_from_slice(values.value(*n)),
            }
        }
    }
}

fn push_literal(text: &mut String, segments: &mut Vec<Segment>, literal: &str) {
    if literal.is_empty() {
        return;
    }
    let start = text.len();
    text.push_str(literal);
    segments.push(Segment::Literal(start..text.len()));
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Vals(Vec<&'static str>);

    impl Values for Vals {
        fn value(&self, n: usize) -> &[u8] {
            self.0[n].as_bytes()
        }
    }

    fn known(name: &str) -> Option<usize> {
        ["user", "token"].iter().position(|n| *n == name)
    }

    fn render(source: &str, values: &Vals) -> String {
        let t = Template::compile(source, known).unwrap();
        let mut out = Vec::new();
        t.write(&mut out, values);
        assert_eq!(out.len(), t.len(values));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn literals_and_variables_in_any_place() {
        let v = Vals(vec!["alice", "t0k"]);
        assert_eq!(render("/login?u={{user}}", &v), "/login?u=alice");
        assert_eq!(render("{{user}}", &v), "alice");
        assert_eq!(render("{{ token }}/{{user}}{{token}}!", &v), "t0k/alicet0k!");
        assert_eq!(render("plain", &v), "plain");
        assert_eq!(render("", &v), "");
        assert!(Template::compile("", known).unwrap().is_empty());
        assert!(Template::compile("/x", known).unwrap().is_constant());
        assert!(!Template::compile("/{{user}}", known).unwrap().is_constant());
        // A lone brace is text.
        assert_eq!(render("{\"u\": \"{{user}}\"}", &v), "{\"u\": \"alice\"}");
    }

    #[test]
    fn unknown_and_unclosed_are_refused() {
        assert_eq!(Template::compile("/{{who}}", known), Err(TemplateError::Unknown("who".into())));
        assert_eq!(Template::compile("/{{user", known), Err(TemplateError::Unclosed));
        assert_eq!(
            TemplateError::Unknown("who".into()).to_string(),
            "'who' is no CSV column and no value an earlier step extracts"
        );
    }

    #[test]
    fn variables_in_order() {
        let t = Template::compile("{{token}}-{{user}}-{{token}}", known).unwrap();
        assert_eq!(t.variables().collect::<Vec<_>>(), vec![1, 0, 1]);
    }
}
