//! The command lines of every origami tool: parsed through one function, [`parse_args`],
//! so that `--help` and `--version` are written to stdout (exit 0) and a usage error (an
//! unknown flag, a missing argument, a bad value) is one `tool: error: ...` line on stderr
//! and exit 2, the same in all four tools; and [`undocumented`], the check that every
//! argument and subcommand of a tool has a description in `--help`.

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::Command;

use crate::exit::Exit;
use crate::output::write_stdout;

/// Parse the process's command line for `tool`: the arguments, or the exit code once help,
/// version or a one-line usage error has been printed.
pub fn parse_args<P: clap::Parser>(tool: &str) -> Result<P, Exit> {
    parse_args_from(tool, std::env::args_os())
}

/// [`parse_args`] of a given command line (`argv[0]` first).
pub fn parse_args_from<P, I, T>(tool: &str, argv: I) -> Result<P, Exit>
where
    P: clap::Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let e = match P::try_parse_from(argv) {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    match clap_display(tool, e) {
        Ok(exit) => Err(exit),
        Err(e) => {
            eprintln!("{}", usage_line(tool, &e, &P::command()));
            Err(Exit::BadInput)
        }
    }
}

/// The one line a usage error prints: `tool: error: ` and clap's first line, with the
/// list of possible values when clap gives one, and a pointer to `--help`. A missing
/// subcommand names the subcommands.
pub fn usage_line(tool: &str, e: &clap::Error, cmd: &Command) -> String {
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        let names: Vec<&str> = cmd
            .get_subcommands()
            .map(|s| s.get_name())
            .filter(|n| *n != "help")
            .collect();
        return if names.is_empty() {
            format!("{tool}: error: arguments are required; see --help")
        } else {
            format!(
                "{tool}: error: a command is required: {}; see --help",
                names.join(", ")
            )
        };
    }
    let text = e.to_string();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("bad usage");
    let mut line = format!(
        "{tool}: error: {}",
        first.strip_prefix("error: ").unwrap_or(first)
    );
    // "the following required arguments were not provided:" lists them on the next,
    // indented lines.
    if line.ends_with(':') {
        let listed: Vec<&str> = lines
            .take_while(|l| l.starts_with("  "))
            .map(str::trim)
            .collect();
        line.push(' ');
        line.push_str(&listed.join(" "));
    }
    if let Some(pv) = text.lines().find(|l| l.contains("[possible values:")) {
        line.push(' ');
        line.push_str(pv.trim());
    }
    line.push_str("; see --help");
    line
}

/// Every argument, option and subcommand of `cmd` (and of its subcommands) that has no
/// description, as `command path: name`; empty when `--help` describes everything.
pub fn undocumented(cmd: &Command) -> Vec<String> {
    let mut missing = Vec::new();
    walk(cmd, cmd.get_name().to_string(), &mut missing);
    missing
}

fn walk(cmd: &Command, path: String, missing: &mut Vec<String>) {
    let blank =
        |s: Option<&clap::builder::StyledStr>| s.map_or(true, |s| s.to_string().trim().is_empty());
    for a in cmd.get_arguments() {
        let id = a.get_id().as_str();
        if matches!(id, "help" | "version") {
            continue;
        }
        if blank(a.get_help()) && blank(a.get_long_help()) {
            missing.push(format!("{path}: {id}"));
        }
    }
    for s in cmd.get_subcommands() {
        if s.get_name() == "help" {
            continue;
        }
        if blank(s.get_about()) && blank(s.get_long_about()) {
            missing.push(format!("{path}: subcommand {}", s.get_name()));
        }
        walk(s, format!("{path} {}", s.get_name()), missing);
    }
}

/// What a clap parse error means for a tool: `Ok(exit)` when it was `--help` or
/// `--version` and the text was written (exit 0) or could not be (`tool: error: ...` on
/// stderr, exit 1); `Err(e)` for a usage error, which `usage::parse_args` reports.
pub fn clap_display(tool: &str, e: clap::Error) -> Result<Exit, clap::Error> {
    if e.use_stderr() {
        return Err(e);
    }
    Ok(match write_stdout(&e.render().to_string()) {
        Ok(()) => Exit::Ok,
        Err(f) => {
            eprintln!("{tool}: error: {}", f.msg);
            f.exit
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser, Subcommand};

    /// A tool with one described and one bare subcommand.
    #[derive(Parser, Debug)]
    #[command(name = "demo")]
    struct Demo {
        #[command(subcommand)]
        cmd: Sub,
    }

    #[derive(Subcommand, Debug)]
    enum Sub {
        /// Described.
        Good {
            /// The size.
            n: u64,
            /// The format.
            #[arg(long, value_parser = ["a", "b"], default_value = "a")]
            format: String,
        },
        Bare {
            n: u64,
            #[arg(long)]
            flag: bool,
        },
    }

    fn parse(args: &[&str]) -> Result<Demo, Exit> {
        parse_args_from::<Demo, _, _>("demo", std::iter::once("demo").chain(args.iter().copied()))
    }

    fn line(args: &[&str]) -> String {
        let e =
            Demo::try_parse_from(std::iter::once("demo").chain(args.iter().copied())).unwrap_err();
        usage_line("demo", &e, &Demo::command())
    }

    #[test]
    fn usage_errors_are_one_line_naming_the_problem() {
        for (args, needle) in [
            (
                &["good", "1", "--bogus"][..],
                "unexpected argument '--bogus'",
            ),
            (&["good"][..], "were not provided: <N>;"),
            (&["good", "x"][..], "invalid value 'x'"),
            (
                &["good", "1", "--format", "c"][..],
                "[possible values: a, b]",
            ),
            (&[][..], "a command is required: good, bare"),
        ] {
            let l = line(args);
            assert!(l.starts_with("demo: error: "), "{l}");
            assert!(l.contains(needle), "{args:?}: {l}");
            assert_eq!(l.lines().count(), 1, "{l}");
            assert!(parse(args).unwrap_err() == Exit::BadInput, "{args:?}");
        }
        assert!(parse(&["good", "3"]).is_ok());
    }

    #[test]
    fn undocumented_names_what_help_leaves_blank() {
        assert_eq!(
            undocumented(&Demo::command()),
            ["demo: subcommand bare", "demo bare: n", "demo bare: flag"]
        );
    }
}
