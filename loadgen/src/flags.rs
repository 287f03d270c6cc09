//! A table of flag specs and what is derived from it: getopt-style tokenizing
//! (`-t2 -c64`, clustered switches, `--name=value`, options after the URL), the
//! `--help` text and the `--options-json` description. The table itself (one `flag!`
//! row per flag, with its parser) lives in `cli`; nothing here knows a particular flag.

use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A whole number (`10`, `1k`).
    Count,
    /// Requests per second (`2000`, `20k`).
    Rate,
    /// A time (`500ms`, `10s`; a bare number is seconds).
    Duration,
    Path,
    Text,
    /// Rates separated by colons (`A:B`).
    Rates,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// `I/N`: part I of N.
    Part,
    /// Seconds since the Unix epoch, with a fraction (`1764000000.250`).
    Epoch,
    /// Takes no value.
    Switch,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Count => "count",
            Kind::Rate => "rate",
            Kind::Duration => "duration",
            Kind::Path => "path",
            Kind::Text => "text",
            Kind::Rates => "rates",
            Kind::Choice(_) => "choice",
            Kind::Part => "part",
            Kind::Epoch => "epoch",
            Kind::Switch => "switch",
        }
    }

    fn choices(self) -> &'static [&'static str] {
        match self {
            Kind::Choice(words) => words,
            _ => &[],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// wrk2's own flags.
    Wrk2,
    /// perflab-load's extensions (listed in docs/contracts/generator.md §5).
    Perflab,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Wrk2 => "wrk2",
            Group::Perflab => "perflab",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Default {
    Absent,
    /// Parsed like a user's value before the command line is applied: the default
    /// the help shows is the one the program uses.
    Value(&'static str),
    /// Described only (it depends on other flags).
    Described(&'static str),
}

impl Default {
    pub fn text(self) -> Option<&'static str> {
        match self {
            Default::Absent => None,
            Default::Value(t) | Default::Described(t) => Some(t),
        }
    }
}

/// Parses one value of a flag (empty for switches) into the options `O`. An error
/// says what is wrong with the value; `Spec::apply_to` puts the flag's name in front.
pub type Apply<O> = fn(&mut O, &str) -> Result<(), String>;

pub struct Spec<O> {
    pub short: Option<char>,
    pub long: &'static str,
    /// Placeholder of the value in the help (`N`, `DUR`); `None` for switches.
    pub value: Option<&'static str>,
    pub kind: Kind,
    pub group: Group,
    pub default: Default,
    pub help: &'static str,
    pub apply: Apply<O>,
}

/// One row of a flag table, in one to three lines:
/// `flag!(Group, "-c", "--connections", "N", Kind, default, "help", |opts, value| assignment)`
/// with `""` for no short name, and for no value placeholder (a switch). The assignment
/// may use `?` on a parser's `Result<_, String>`.
macro_rules! flag {
    ($group:ident, $short:literal, $long:literal, $value:literal, $kind:expr, $default:expr, $help:expr,
     |$o:pat_param, $v:pat_param| $apply:expr) => {
        $crate::flags::Spec {
            short: $crate::flags::short_name($short),
            long: $crate::flags::long_name($long),
            value: $crate::flags::placeholder($value),
            kind: $kind,
            group: $crate::flags::Group::$group,
            default: $default,
            help: $help,
            apply: |$o, $v| {
                $apply;
                Ok(())
            },
        }
    };
}
pub(crate) use flag;

/// `"-c"` → `c`; `""` → none. Evaluated at compile time: a malformed name does not build.
pub const fn short_name(s: &'static str) -> Option<char> {
    match s.as_bytes() {
        [] => None,
        [b'-', c] => Some(*c as char),
        _ => panic!("a short flag is a dash and one character"),
    }
}

/// `"--connections"` → `connections`.
pub const fn long_name(s: &'static str) -> &'static str {
    match s.as_bytes() {
        [b'-', b'-', name @ ..] => match std::str::from_utf8(name) {
            Ok(name) => name,
            Err(_) => panic!("a flag name is UTF-8"),
        },
        _ => panic!("a long flag starts with --"),
    }
}

/// `""` → none (a switch).
pub const fn placeholder(s: &'static str) -> Option<&'static str> {
    if s.is_empty() { None } else { Some(s) }
}

impl<O> Spec<O> {
    /// The flag as error messages name it: `-R/--rate` or `--warmup`.
    pub fn display(&self) -> String {
        match self.short {
            Some(s) => format!("-{s}/--{}", self.long),
            None => format!("--{}", self.long),
        }
    }

    /// Parses `value` into `opts`; an error names the flag (`-R/--rate: ...`).
    pub fn apply_to(&self, opts: &mut O, value: &str) -> Result<(), String> {
        (self.apply)(opts, value).map_err(|e| format!("{}: {e}", self.display()))
    }

    fn takes_value(&self) -> bool {
        self.kind != Kind::Switch
    }
}

/// `u_latency` and `u-latency` name the same flag (wrk spells some with `_`).
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| x == y || (x == b'_' || x == b'-') && (y == b'_' || y == b'-'))
}

pub fn find_long<'a, O>(table: &'a [Spec<O>], name: &str) -> Option<&'a Spec<O>> {
    table.iter().find(|s| same_name(s.long, name))
}

fn find_short<O>(table: &[Spec<O>], c: char) -> Option<&Spec<O>> {
    table.iter().find(|s| s.short == Some(c))
}

/// The command line split into flags (in order, with their values) and positional
/// arguments (everything else, and everything after `--`).
pub struct Tokens<'a, O> {
    pub flags: Vec<(&'a Spec<O>, String)>,
    pub positional: Vec<String>,
}

pub fn tokenize<'a, O>(table: &'a [Spec<O>], args: &[String]) -> Result<Tokens<'a, O>, String> {
    let mut out = Tokens { flags: Vec::new(), positional: Vec::new() };
    let mut rest = args.iter();
    while let Some(a) = rest.next() {
        if a == "--" {
            out.positional.extend(rest.cloned());
            break;
        }
        if a == "-" || !a.starts_with('-') {
            out.positional.push(a.clone());
        } else if let Some(long) = a.strip_prefix("--") {
            out.flags.push(long_flag(table, long, &mut rest)?);
        } else {
            short_flags(table, &a[1..], &mut rest, &mut out.flags)?;
        }
    }
    Ok(out)
}

/// `--name`, `--name=value` or `--name value` (the value taken from `rest`).
fn long_flag<'a, 'r, O>(
    table: &'a [Spec<O>],
    arg: &str,
    rest: &mut impl Iterator<Item = &'r String>,
) -> Result<(&'a Spec<O>, String), String> {
    let (name, inline) = match arg.split_once('=') {
        Some((n, v)) => (n, Some(v.to_string())),
        None => (arg, None),
    };
    let spec = find_long(table, name).ok_or_else(|| format!("unknown flag '--{name}'"))?;
    if !spec.takes_value() {
        return match inline {
            Some(_) => Err(format!("--{}: takes no value", spec.long)),
            None => Ok((spec, String::new())),
        };
    }
    let value = match inline {
        Some(v) => v,
        None => rest.next().ok_or_else(|| format!("--{}: missing value", spec.long))?.clone(),
    };
    Ok((spec, value))
}

/// Short options, possibly clustered (`-LU`) or with an attached value (`-t2`).
fn short_flags<'a, 'r, O>(
    table: &'a [Spec<O>],
    cluster: &str,
    rest: &mut impl Iterator<Item = &'r String>,
    out: &mut Vec<(&'a Spec<O>, String)>,
) -> Result<(), String> {
    for (at, c) in cluster.char_indices() {
        let spec = find_short(table, c).ok_or_else(|| format!("unknown flag '-{c}'"))?;
        if !spec.takes_value() {
            out.push((spec, String::new()));
            continue;
        }
        let attached = &cluster[at + c.len_utf8()..];
        let value = if !attached.is_empty() {
            attached.to_string()
        } else {
            rest.next().ok_or_else(|| format!("-{c} (--{}): missing value", spec.long))?.clone()
        };
        out.push((spec, value));
        return Ok(());
    }
    Ok(())
}

const HELP_COLUMN: usize = 30;
/// Lines of the help are at most this long.
const WIDTH: usize = 79;

/// Words of `text` in lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines
}

/// The options of one group as `--help` lists them: names on the left, the help
/// wrapped in a column, the default in brackets at the end.
pub fn usage_block<O>(table: &[Spec<O>], group: Group) -> String {
    let mut out = String::new();
    for s in table.iter().filter(|s| s.group == group) {
        let mut left = match s.short {
            Some(c) => format!("  -{c}, --{}", s.long),
            None => format!("      --{}", s.long),
        };
        if let Some(v) = s.value {
            left.push_str(&format!(" <{v}>"));
        }
        let mut help = s.help.to_string();
        let choices = s.kind.choices();
        if !choices.is_empty() && !help.contains(choices[0]) {
            help.push_str(&format!(" ({})", choices.join(", ")));
        }
        let mut lines = wrap(&help, WIDTH - HELP_COLUMN);
        if let Some(d) = s.default.text() {
            let tag = format!("[{d}]");
            let last = lines.last_mut().expect("never empty");
            if last.chars().count() + 1 + tag.chars().count() <= WIDTH - HELP_COLUMN {
                let pad = WIDTH - HELP_COLUMN - last.chars().count() - tag.chars().count();
                last.push_str(&" ".repeat(pad));
                last.push_str(&tag);
            } else {
                lines.push(format!("{tag:>width$}", width = WIDTH - HELP_COLUMN));
            }
        }
        for (k, line) in lines.iter().enumerate() {
            if k == 0 {
                if left.chars().count() + 2 > HELP_COLUMN {
                    out.push_str(&left);
                    out.push('\n');
                    out.push_str(&" ".repeat(HELP_COLUMN));
                } else {
                    out.push_str(&format!("{left:<HELP_COLUMN$}"));
                }
            } else {
                out.push_str(&" ".repeat(HELP_COLUMN));
            }
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The table as JSON, for the lab and the docs test.
pub fn options_json<O>(program: &str, table: &[Spec<O>]) -> Value {
    let options: Vec<Value> = table
        .iter()
        .map(|s| {
            json!({
                "long": s.long,
                "short": s.short.map(|c| c.to_string()),
                "value": s.value,
                "kind": s.kind.name(),
                "group": s.group.name(),
                "default": s.default.text(),
                "choices": if s.kind.choices().is_empty() { Value::Null } else { json!(s.kind.choices()) },
                "help": s.help,
            })
        })
        .collect();
    json!({"program": program, "options": options})
}

#[cfg(test)]
/// The docs table row of a flag: `| \`--flag\` | \`default\` | help |` (`–` without a default).
pub fn markdown_row<O>(s: &Spec<O>) -> String {
    let default = s.default.text().map_or("–".to_string(), |d| format!("`{d}`"));
    format!("| `--{}` | {default} | {} |", s.long, s.help)
}

#[cfg(test)]
/// The README's usage row of a flag: `| \`-c, --connections N\` | help | default |`.
pub fn usage_row<O>(s: &Spec<O>) -> String {
    let mut names = match s.short {
        Some(c) => format!("-{c}, --{}", s.long),
        None => format!("--{}", s.long),
    };
    if let Some(v) = s.value {
        names = format!("{names} {v}");
    }
    format!("| `{names}` | {} | {} |", s.help, s.default.text().unwrap_or("–"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Debug)]
    struct O {
        n: u32,
        on: bool,
    }

    #[rustfmt::skip]
    fn table() -> Vec<Spec<O>> {
        vec![
            flag!(Wrk2, "-n", "--count", "N", Kind::Count, Default::Value("1"), "how many",
                |o, v| o.n = v.parse().map_err(|_| "bad".to_string())?),
            flag!(Perflab, "-U", "--u_flag", "", Kind::Switch, Default::Absent,
                "a switch whose help is long enough to be wrapped onto a second line of the usage text",
                |o, _| o.on = true),
        ]
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn getopt_style() {
        let t = table();
        let tk = tokenize(&t, &args(&["-Un5", "url", "--count=7", "--u-flag", "--", "-n"])).unwrap();
        let names: Vec<(&str, &str)> = tk.flags.iter().map(|(s, v)| (s.long, v.as_str())).collect();
        assert_eq!(names, [("u_flag", ""), ("count", "5"), ("count", "7"), ("u_flag", "")]);
        assert_eq!(tk.positional, ["url", "-n"]);
        assert_eq!(tokenize(&t, &args(&["-x"])).err().unwrap(), "unknown flag '-x'");
        assert_eq!(tokenize(&t, &args(&["--u_flag=1"])).err().unwrap(), "--u_flag: takes no value");
        assert_eq!(tokenize(&t, &args(&["-n"])).err().unwrap(), "-n (--count): missing value");
    }

    #[test]
    fn usage_wraps_and_shows_defaults() {
        let t = table();
        let text = usage_block(&t, Group::Wrk2);
        assert_eq!(text.trim_end().len(), WIDTH, "{text}");
        assert!(
            text.starts_with("  -n, --count <N>             how many") && text.trim_end().ends_with("[1]"),
            "{text}"
        );
        let text = usage_block(&t, Group::Perflab);
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
    }

    #[test]
    fn json_and_markdown() {
        let t = table();
        let v = options_json("p", &t);
        assert_eq!(v["options"][0]["short"], "n");
        assert_eq!(v["options"][0]["default"], "1");
        assert!(v["options"][1]["default"].is_null() && v["options"][1]["value"].is_null());
        assert_eq!(markdown_row(&t[0]), "| `--count` | `1` | how many |");
    }
}
