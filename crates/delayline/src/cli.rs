//! The delay line's command line, the contract crest.network.topology starts it with:
//!
//! ```text
//! crest-delayline --pair NS_A:DEV_A:NS_B:DEV_B [--pair ...] --delay-ms D [--jitter-ms J]
//!     [--loss-pct P] [--seed S] [--limit-packets N] [--offload] --ready-file PATH --stats-file PATH
//! ```
//!
//! The delay given is one way (a round trip is twice it). `--offload`: the devices hand the line
//! GSO packets (up to 64 KiB, one TCP segment size) and take them back, so a bulk transfer crosses
//! it in a few large packets instead of many of one MTU; for links that neither lose packets (a lost
//! GSO packet would be dozens of segments lost at once) nor are shaped (HTB would send them in lumps).

use std::ffi::OsString;
use std::path::PathBuf;

use crate::line::DEFAULT_LIMIT_PACKETS;

pub const USAGE: &str = "usage: crest-delayline --pair NS_A:DEV_A:NS_B:DEV_B [--pair ...] --delay-ms D \
[--jitter-ms J] [--loss-pct P] [--seed S] [--limit-packets N] [--offload] --ready-file PATH --stats-file PATH\n";

/// One TUN pair: the device `dev_a` in namespace `ns_a` and `dev_b` in `ns_b`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub ns_a: String,
    pub dev_a: String,
    pub ns_b: String,
    pub dev_b: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub pairs: Vec<Pair>,
    pub delay_ms: f64,
    pub jitter_ms: f64,
    pub loss_pct: f64,
    pub seed: u64,
    pub limit_packets: usize,
    pub offload: bool,
    pub ready_file: PathBuf,
    pub stats_file: PathBuf,
}

#[derive(Debug, PartialEq)]
pub enum Command {
    Run(Config),
    Help,
}

fn number(flag: &str, value: &str) -> Result<f64, String> {
    value.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| format!("{flag} takes a number, not {value:?}"))
}

pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut pairs = Vec::new();
    let (mut delay_ms, mut jitter_ms, mut loss_pct, mut seed) = (None, 0.0, 0.0, 0u64);
    let mut limit_packets = DEFAULT_LIMIT_PACKETS;
    let (mut ready_file, mut stats_file, mut offload) = (None, None, false);
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg.into_string().map_err(|a| format!("not UTF-8: {a:?}"))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        if flag == "-h" || flag == "--help" {
            return Ok(Command::Help);
        }
        if flag == "--offload" && inline.is_none() {
            offload = true;
            continue;
        }
        let mut value = || -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args.next().and_then(|v| v.into_string().ok()).ok_or_else(|| format!("{flag} needs a value")),
            }
        };
        match flag.as_str() {
            "--pair" => {
                let v = value()?;
                let parts: Vec<&str> = v.split(':').collect();
                if parts.len() != 4 || parts.iter().any(|p| p.is_empty()) {
                    return Err(format!("--pair takes NS_A:DEV_A:NS_B:DEV_B, not {v:?}"));
                }
                pairs.push(Pair {
                    ns_a: parts[0].into(),
                    dev_a: parts[1].into(),
                    ns_b: parts[2].into(),
                    dev_b: parts[3].into(),
                });
            }
            "--delay-ms" => delay_ms = Some(number(&flag, &value()?)?),
            "--jitter-ms" => jitter_ms = number(&flag, &value()?)?,
            "--loss-pct" => loss_pct = number(&flag, &value()?)?,
            "--seed" => {
                let v = value()?;
                seed = v.parse().map_err(|_| format!("--seed takes a whole number ≥ 0, not {v:?}"))?;
            }
            "--limit-packets" => {
                let v = value()?;
                limit_packets = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--limit-packets takes a whole number ≥ 1, not {v:?}"))?;
            }
            "--ready-file" => ready_file = Some(PathBuf::from(value()?)),
            "--stats-file" => stats_file = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown option {other:?}")),
        }
    }
    if pairs.is_empty() {
        return Err("--pair is required".into());
    }
    let delay_ms = delay_ms.ok_or("--delay-ms is required")?;
    if delay_ms < 0.0 || jitter_ms < 0.0 || !(0.0..100.0).contains(&loss_pct) {
        return Err("--delay-ms and --jitter-ms must be ≥ 0 and --loss-pct in [0, 100)".into());
    }
    Ok(Command::Run(Config {
        pairs,
        delay_ms,
        jitter_ms,
        loss_pct,
        seed,
        limit_packets,
        offload,
        ready_file: ready_file.ok_or("--ready-file is required")?,
        stats_file: stats_file.ok_or("--stats-file is required")?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn topologys_command_line_parses() {
        let cmd = parse(args(
            "--pair crest-ab-s1:up:crest-ab-r:s1 --pair crest-ab-s2:up:crest-ab-r:s2 --delay-ms 1 \
             --jitter-ms 0.5 --loss-pct 2.5 --seed 11259375 --ready-file /r --stats-file=/s",
        ))
        .unwrap();
        let Command::Run(c) = cmd else { panic!("not a run") };
        assert_eq!(c.pairs.len(), 2);
        assert_eq!(
            c.pairs[1],
            Pair { ns_a: "crest-ab-s2".into(), dev_a: "up".into(), ns_b: "crest-ab-r".into(), dev_b: "s2".into() }
        );
        assert_eq!((c.delay_ms, c.jitter_ms, c.loss_pct, c.seed), (1.0, 0.5, 2.5, 11_259_375));
        assert_eq!((c.ready_file, c.stats_file), (PathBuf::from("/r"), PathBuf::from("/s")));
        assert_eq!(c.limit_packets, DEFAULT_LIMIT_PACKETS);
        assert!(!c.offload);
        let Command::Run(c) =
            parse(args("--pair a:b:c:d --offload --delay-ms 1 --ready-file r --stats-file s")).unwrap()
        else {
            panic!()
        };
        assert!(c.offload);
    }

    #[test]
    fn python_g_formatting_of_small_delays_parses() {
        let Command::Run(c) = parse(args("--pair a:b:c:d --delay-ms 1e-05 --ready-file r --stats-file s")).unwrap()
        else {
            panic!()
        };
        assert_eq!(c.delay_ms, 1e-5);
    }

    #[test]
    fn bad_command_lines_say_what_is_wrong() {
        for (line, says) in [
            ("--delay-ms 1 --ready-file r --stats-file s", "--pair is required"),
            ("--pair a:b:c --delay-ms 1 --ready-file r --stats-file s", "NS_A:DEV_A:NS_B:DEV_B"),
            ("--pair a::c:d --delay-ms 1 --ready-file r --stats-file s", "NS_A:DEV_A:NS_B:DEV_B"),
            ("--pair a:b:c:d --ready-file r --stats-file s", "--delay-ms is required"),
            ("--pair a:b:c:d --delay-ms -1 --ready-file r --stats-file s", "must be ≥ 0"),
            ("--pair a:b:c:d --delay-ms 1 --loss-pct 100 --ready-file r --stats-file s", "[0, 100)"),
            ("--pair a:b:c:d --delay-ms x --ready-file r --stats-file s", "takes a number"),
            ("--pair a:b:c:d --delay-ms 1 --stats-file s", "--ready-file is required"),
            ("--pair a:b:c:d --delay-ms 1 --ready-file r --stats-file s --limit-packets 0", "--limit-packets"),
            ("--pair a:b:c:d --delay-ms 1 --ready-file r --stats-file s --bogus", "unknown option"),
            ("--pair", "--pair needs a value"),
        ] {
            let err = parse(args(line)).unwrap_err();
            assert!(err.contains(says), "{line}: {err}");
        }
        assert_eq!(parse(args("--help")).unwrap(), Command::Help);
    }
}
