//! `rialto bench codec`: the FIX codec timed per message without sockets, the way FIX Antenna's
//! performance lab times an engine (send, receive, receive-and-send, throughput; see
//! `loadgen::codec`), optionally beside QuickFIX/J's (`java/codecbench`) in the same run: rounds
//! alternate which side goes first, and the medians give one `codec-ratio` line per figure.
//! Prints one `codec ...` line per figure and round.

use super::CmdResult;
use loadgen::codec::{compare, median_line, parse_line, run_codec, validators, CodecBench, Line};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Timed messages per latency figure.
    #[arg(long, default_value_t = 500_000, value_parser = clap::value_parser!(u64).range(1..))]
    messages: u64,
    /// Untimed messages before each figure.
    #[arg(long, default_value_t = 200_000)]
    warmup: u64,
    /// Length of the throughput figure, seconds (0.001-3600).
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Runs of every figure; with more than one, the medians per figure follow.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    rounds: u32,
    /// Also run the QuickFIX/J harness (`java/codecbench`) each round, alternating which goes
    /// first, and print the ratio QuickFIX/J / Rialto per figure.
    #[arg(long)]
    with_quickfixj: bool,
    /// The harness's jar (`cd java && mvn -q -B package -DskipTests -pl codecbench -am`).
    #[arg(long, default_value = "java/codecbench/target/codecbench.jar")]
    quickfixj_jar: PathBuf,
    /// The java command.
    #[arg(long, default_value = "java")]
    java: PathBuf,
    /// Print the NewOrderSingle and ExecutionReport measured (SOH as `|`) and exit.
    #[arg(long)]
    print_messages: bool,
}

fn rialto_round(cfg: &CodecBench, round: u32, lines: &mut Vec<Line>) -> CmdResult {
    let mut problem = None;
    let check = run_codec(cfg, &validators(), |f| {
        let text = format!("{} round={round}", f.line());
        println!("{text}");
        match parse_line(&text) {
            Some(Ok(l)) => lines.push(l),
            Some(Err(e)) => problem = Some(e),
            None => problem = Some(format!("{text:?} is not a codec line")),
        }
    })?;
    eprintln!("bench codec: rialto round {round} check {check}");
    match problem {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

fn quickfixj_round(args: &Args, round: u32, lines: &mut Vec<Line>) -> CmdResult {
    let mut child = Command::new(&args.java)
        .args(["-Xms1g", "-Xmx1g", "-XX:+AlwaysPreTouch", "-jar"])
        .arg(&args.quickfixj_jar)
        .args([
            "--messages",
            &args.messages.to_string(),
            "--warmup",
            &args.warmup.to_string(),
            "--seconds",
            &args.seconds.to_string(),
            "--validation",
            "off,on",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", args.java.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout from java")?;
    let mut problem = None;
    for text in BufReader::new(stdout).lines() {
        let text = text?;
        match parse_line(&text) {
            Some(Ok(l)) if l.implementation == "quickfixj" => {
                println!("{text} round={round}");
                lines.push(l);
            }
            Some(Ok(_)) => problem = Some(format!("{text:?}: not a QuickFIX/J line")),
            Some(Err(e)) => problem = Some(e),
            None => eprintln!("{text}"),
        }
    }
    let status = child.wait()?;
    if !status.success() {
        return Err(format!("the QuickFIX/J harness failed: {status}").into());
    }
    match problem {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

pub fn run(args: Args) -> CmdResult {
    if args.print_messages {
        for m in loadgen::codec::sample_messages()? {
            println!("{m}");
        }
        return Ok(());
    }
    if !(0.001..=3600.0).contains(&args.seconds) {
        return Err(format!("--seconds {}: give 0.001 to 3600", args.seconds).into());
    }
    if args.with_quickfixj && !args.quickfixj_jar.is_file() {
        return Err(format!(
            "{}: no such jar; build it with `cd java && mvn -q -B package -DskipTests -pl codecbench -am` or pass --quickfixj-jar",
            args.quickfixj_jar.display()
        )
        .into());
    }
    let cfg = CodecBench {
        messages: args.messages,
        warmup: args.warmup,
        seconds: args.seconds,
    };
    let mut lines = Vec::new();
    for round in 1..=args.rounds {
        // Alternate the order so that neither side always runs in the same minute of the hour.
        if args.with_quickfixj && round % 2 == 0 {
            quickfixj_round(&args, round, &mut lines)?;
            rialto_round(&cfg, round, &mut lines)?;
        } else {
            rialto_round(&cfg, round, &mut lines)?;
            if args.with_quickfixj {
                quickfixj_round(&args, round, &mut lines)?;
            }
        }
    }
    if args.rounds > 1 {
        println!("# medians of {} rounds", args.rounds);
        let mut seen = Vec::new();
        for l in &lines {
            let id = (l.implementation.clone(), l.key());
            if seen.contains(&id) {
                continue;
            }
            let of: Vec<&Line> = lines
                .iter()
                .filter(|m| m.implementation == id.0 && m.key() == id.1)
                .collect();
            if let Some(m) = median_line(&of) {
                let values: Vec<String> = m
                    .values
                    .iter()
                    .filter(|(k, _)| k != "round")
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                println!(
                    "codec-median impl={} figure={} msg={} validation={} {}",
                    m.implementation,
                    m.figure,
                    m.msg,
                    m.validation,
                    values.join(" ")
                );
            }
            seen.push(id);
        }
    }
    for ratio in compare(&lines) {
        println!("{ratio}");
    }
    Ok(())
}
