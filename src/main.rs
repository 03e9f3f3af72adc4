//! The `jitterlab` command line: parses arguments, calls the library, prints errors once.
//!
//! Exit codes: 0 success, 2 bad input (usage, scenario, values), 130 interrupted (Ctrl-C),
//! 1 anything else.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use jitterlab::backoff::BackoffParams;
use jitterlab::cancel::CancelToken;
use jitterlab::delays::{DelaysRequest, parse_jitters};
use jitterlab::param::ParamError;
use std::path::{Path, PathBuf};

use jitterlab::recommend::{At, Constraints, Objective};
use jitterlab::runner::{self, RunOptions, RunReport};
use jitterlab::scenario::ScenarioDoc;
use jitterlab::scenario::library::{self, Source};
use jitterlab::sweep::Shard;
use jitterlab::time::{SimDuration, parse_duration};
use jitterlab::{Error, Result};

use cli::args::{
    CheckArgs, Cli, Command, DelaysArgs, InitArgs, ListArgs, LiveArgs, MergeArgs, PresetsArgs,
    PresetsCommand, RecommendArgs, RunArgs, ServeArgs,
};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let live = matches!(cli.command, Command::Live(_));
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // A live run has nothing to resume: it says so instead of `--resume`.
        Err(Error::Interrupted) if live => {
            say(
                "error: interrupted; nothing was written (a live run cannot be resumed: run it again)",
            );
            ExitCode::from(130)
        }
        Err(err) => {
            // Complete as is: every variant that has a cause includes its message, so walking
            // `source()` would print it again.
            say(&format!("error: {}", err.naming(cli::flag)));
            ExitCode::from(match err {
                // The shell's convention for a run stopped by SIGINT.
                Error::Interrupted | Error::ChartsInterrupted(_) => 130,
                _ if err.is_user_error() => 2,
                _ => 1,
            })
        }
    }
}

/// Prints clap's answer to bad arguments, escaped like every line for a person, with a hint
/// when a negative number was read as a flag (`run -1`); exit code 2. Help and version are
/// printed as clap prints them.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    }
    for line in e.render().to_string().lines() {
        say(line);
    }
    let number = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => arg.parse::<f64>().is_ok().then(|| arg.clone()),
        _ => None,
    };
    if let (ErrorKind::UnknownArgument, Some(arg)) = (e.kind(), number) {
        say(&format!(
            "hint: `{arg}` starts with `-`, so it was read as a flag, and there is none of that name; a value of a flag goes after it (`--seed 7`), no count or seed is negative, and a file of that name is written `./{arg}`"
        ));
    }
    ExitCode::from(2)
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Run(args) => run(args),
        Command::Live(args) => live(args),
        Command::Serve(args) => serve(args),
        Command::Check(args) => check(args),
        Command::List(args) => list(args),
        Command::Show(args) => {
            print!("{}", library::lookup(&args.name)?.text);
            Ok(())
        }
        Command::Init(args) => init(args),
        Command::Delays(args) => delays(args),
        Command::Merge(args) => merge(args),
        Command::Plot(args) if args.check => check_charts(&args.dir),
        Command::Plot(args) => {
            // A refused animation refuses before a chart is drawn.
            let pending = match args.animate {
                true => Some(jitterlab::output::plot::prepare_animation(&args.dir)?),
                false => None,
            };
            plot(&args.dir, false, &CancelToken::new())?;
            pending.map_or(Ok(()), |p| animate(p, false))
        }
        Command::Recommend(args) => recommend(args),
        Command::Presets(args) => presets(args),
    }
}

/// `jitterlab presets`: one line each with its source; `presets show NAME`: its keys.
fn presets(args: PresetsArgs) -> Result<()> {
    use jitterlab::presets;
    match args.command {
        None => {
            let width = presets::NAMES.iter().map(|n| n.len()).max().unwrap_or(0);
            for p in presets::all() {
                println!("{:<width$}  {}", p.name, p.summary);
                println!("{:<width$}  source: {}", "", p.source);
            }
            Ok(())
        }
        Some(PresetsCommand::Show { name }) => {
            // The scenario's own refusal, did-you-mean included.
            let preset = jitterlab::scenario::presets::lookup("presets show NAME", &name)?;
            print!("{}", jitterlab::scenario::presets::show(&preset));
            Ok(())
        }
    }
}

/// Prints a line for a person on stderr, escaped and shortened ([`jitterlab::text`]): names,
/// values and paths of any length or content never reach the terminal raw.
fn say(line: &str) {
    eprintln!("{}", jitterlab::text::for_terminal(line));
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Loads SCENARIO (a file, else a built-in of that name; the default without one) and applies
/// the overrides. Says on stderr which was used when the name could mean either.
fn load(scenario: Option<&Path>, sets: &[String], quiet: bool) -> Result<ScenarioDoc> {
    let source = match scenario {
        Some(arg) => Source::resolve(arg)?,
        None => Source::Builtin(library::default()),
    };
    if scenario.is_some() && source.is_ambiguous() && !quiet {
        say(&format!("using {source}"));
    }
    let mut doc = source.load()?;
    for s in sets {
        doc.set(s)?;
    }
    Ok(doc)
}

fn run(args: RunArgs) -> Result<()> {
    let mut doc = load(args.scenario.as_deref(), &args.sets, args.quiet)?;
    if let Some(seed) = args.seed {
        doc.set_seed(seed)?;
    }
    if let Some(r) = args.replications {
        doc.set_replications(r)?;
    }
    let cancel = CancelToken::new();
    // Ctrl-C starts no further unit; the finished ones stay in the journal for --resume. Were
    // the handler refused, Ctrl-C would end the process at once: the journal, flushed after
    // every unit, still resumes. Set before the sweep's points are checked, which a sweep of
    // 100000 points takes seconds to do (once: their warnings come from the same points).
    let on_interrupt = cancel.clone();
    let _ = ctrlc::set_handler(move || on_interrupt.cancel());
    let points = doc.points_until(&cancel)?;
    warn(&points);
    if args.animate {
        // Refused before anything runs: a refusal writes nothing.
        let dir = match &args.out {
            Some(out) => out.clone(),
            None => Path::new("out").join(doc.base()?.name),
        };
        jitterlab::output::plot::animate_preflight(&points, &dir)?;
    }
    let shard = match &args.shard {
        Some(s) => Shard::parse(s)?,
        None => Shard::ALL,
    };
    let options = RunOptions {
        out: args.out.clone(),
        threads: args.threads.map_or(0, usize::from),
        shard,
        resume: args.resume,
        force: args.force,
        command: command_line(),
    };
    let report = runner::run_points(
        &doc,
        points,
        &options,
        &cancel,
        &cli::progress::Bar::new(args.quiet),
    )?;
    finish(&report, args.no_plots, args.quiet, &shard, &cancel)?;
    match args.animate && report.complete {
        true => animate(
            jitterlab::output::plot::prepare_animation(&report.dir)?,
            args.quiet,
        ),
        false => Ok(()),
    }
}

/// Writes the folder's herd animation (`herd.gif`) and says so.
fn animate(pending: jitterlab::output::plot::PendingAnimation, quiet: bool) -> Result<()> {
    let path = pending.write()?;
    if !quiet {
        say(&format!("wrote {}", path.display()));
    }
    Ok(())
}

fn live(args: LiveArgs) -> Result<()> {
    let mut doc = load(Some(&args.scenario), &args.sets, args.quiet)?;
    if let Some(seed) = args.seed {
        doc.set_seed(seed)?;
    }
    let cancel = CancelToken::new();
    // Ctrl-C stops the live run within 50 ms; its sockets and tasks close, nothing is written.
    let on_interrupt = cancel.clone();
    let _ = ctrlc::set_handler(move || on_interrupt.cancel());
    // A sweep is refused before its points are checked; the one point is, for its warnings.
    jitterlab::live::check_one_point(&doc)?;
    warn(&doc.points_until(&cancel)?);
    let options = jitterlab::live::LiveOptions {
        out: args.out.clone(),
        force: args.force,
        command: command_line(),
    };
    let quiet = args.quiet;
    let report = jitterlab::live::live(&doc, &options, &cancel, &|note| {
        if !quiet {
            say(note);
        }
    })?;
    if report.replications_skipped > 0 && !quiet {
        say(&format!(
            "note: live runs replication 0 only ({} more in the scenario not run)",
            report.replications_skipped
        ));
    }
    print!("{}", cli::table::render(&report.run.points));
    println!();
    print!("{}", cli::live::render(&report.comparison));
    if !quiet {
        eprintln!("{}", cli::live::timers(&report.timers));
    }
    if !args.no_plots {
        plot(&report.run.dir, quiet, &cancel)?;
    }
    if !quiet {
        say(&format!("results in {}", report.run.dir.display()));
    }
    Ok(())
}

fn serve(args: ServeArgs) -> Result<()> {
    let addr: std::net::SocketAddr = args.addr.trim().parse().map_err(|_| {
        Error::invalid(
            "--addr",
            jitterlab::text::shown(&args.addr),
            "an IP address and port, such as 127.0.0.1:8029 (port 0: any free port)",
        )
    })?;
    let doc = load(args.scenario.as_deref(), &[], args.quiet)?;
    // The command the page shows runs the same scenario: a built-in by its name, a file as
    // given.
    let scenario_arg = match &args.scenario {
        Some(arg) => arg.display().to_string(),
        None => library::default().name.to_string(),
    };
    let playground = jitterlab::serve::Playground::new(doc, scenario_arg)?;
    let server = jitterlab::serve::Server::bind(playground, addr)?;
    if !addr.ip().is_loopback() {
        say(&format!(
            "warning: listening on {}, not loopback: anyone who can reach it can run simulations on this machine (the playground has no login)",
            server.url()
        ));
    }
    let cancel = CancelToken::new();
    let on_interrupt = cancel.clone();
    let _ = ctrlc::set_handler(move || on_interrupt.cancel());
    println!("{}", server.url());
    if !args.quiet {
        say("the playground is open at the address above; Ctrl-C stops it");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    server.serve_until(&cancel)
}

/// Says on stderr what in the scenario's points can never act (always: it is about the
/// input).
fn warn(points: &[jitterlab::scenario::Point]) {
    for w in ScenarioDoc::warnings_of(points) {
        say(&format!("warning: {w}"));
    }
}

fn finish(
    report: &RunReport,
    no_plots: bool,
    quiet: bool,
    shard: &Shard,
    cancel: &CancelToken,
) -> Result<()> {
    if !report.complete {
        if !quiet {
            say(&format!(
                "shard {}/{} written to {}; combine the shards with `jitterlab merge DIR... --out DIR`",
                shard.index,
                shard.count,
                report.dir.display()
            ));
        }
        return Ok(());
    }
    print!("{}", cli::table::render(&report.points));
    if !no_plots {
        plot(&report.dir, quiet, cancel)?;
    }
    if !quiet {
        say(&format!("results in {}", report.dir.display()));
    }
    Ok(())
}

fn recommend(args: RecommendArgs) -> Result<()> {
    let positive = |flag: &str, v: Option<f64>, max: f64| -> Result<Option<f64>> {
        match v {
            Some(x) if !(x.is_finite() && x > 0.0 && x <= max) => Err(Error::invalid(
                flag,
                x,
                format!("a number above 0 and at most {max}"),
            )),
            other => Ok(other),
        }
    };
    let constraints = Constraints {
        p99: args
            .p99
            .as_deref()
            .map(|t| parse_duration("--p99", t))
            .transpose()?,
        max_amplification: positive("--max-amplification", args.max_amplification, f64::MAX)?,
        min_success: positive("--min-success", args.min_success, 1.0)?,
        deadline: args
            .deadline
            .as_deref()
            .map(|t| parse_duration("--deadline", t))
            .transpose()?,
    };
    let objective: Option<Objective> = args.objective.as_deref().map(str::parse).transpose()?;
    let at: Vec<At> = args
        .at
        .iter()
        .map(|a| a.parse())
        .collect::<jitterlab::error::Result<_>>()?;
    let answer = jitterlab::recommend::recommend_for(&args.dir, &constraints, objective, &at)?;
    let dir = args.dir.display().to_string();
    let text = cli::recommend::render(&answer, answer.objective, args.top, &dir);
    print!("{text}");
    jitterlab::recommend::keep_answer(&args.dir, &text)?;
    say(&format!("wrote {}", answer.pareto_csv.display()));
    if !args.no_plots {
        plot(&args.dir, false, &CancelToken::new())?;
    }
    Ok(())
}

/// Draws every chart and the report of a result folder, and warns of each chart that breaks
/// a rule of legible charts (always, as warnings about the input are). Once `cancel` is
/// cancelled, no further file is written, and the interruption says that the results are
/// complete.
fn plot(dir: &std::path::Path, quiet: bool, cancel: &CancelToken) -> Result<()> {
    let started = std::time::Instant::now();
    let drawn =
        jitterlab::output::plot::draw_with_report_until(dir, cancel).map_err(|e| match e {
            Error::Interrupted => Error::ChartsInterrupted(dir.to_path_buf()),
            other => other,
        })?;
    for p in &drawn.problems {
        eprintln!("warning: chart {p}");
    }
    if !quiet {
        say(&format!(
            "drew {} chart files and {} in {:.2} s",
            drawn.files.len(),
            drawn.report.display(),
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(())
}

/// `plot --check`: every chart drawn in memory and held to the legibility rules.
fn check_charts(dir: &std::path::Path) -> Result<()> {
    let problems = jitterlab::output::plot::check_charts(dir)?;
    for p in &problems {
        println!("{p}");
    }
    if problems.is_empty() {
        eprintln!("every chart of {} is legible", dir.display());
        Ok(())
    } else {
        Err(Error::Plot {
            path: dir.to_path_buf(),
            message: format!("{} problems in its charts (listed above)", problems.len()),
        })
    }
}

fn check(args: CheckArgs) -> Result<()> {
    let doc = load(Some(&args.scenario), &args.sets, false)?;
    let points = doc.points()?;
    warn(&points);
    // `[playground]` is checked as written, without --set (serve takes none), and only when
    // the file has one; under --set a problem is a warning: `check` refuses nothing `run` takes.
    let as_written;
    let written = match args.sets.is_empty() {
        true => &doc,
        false => {
            as_written = load(Some(&args.scenario), &[], true)?;
            &as_written
        }
    };
    if written.has_playground() {
        match written.knobs() {
            Err(e) if !args.sets.is_empty() => say(&format!("warning: [playground]: {e}")),
            checked => drop(checked?),
        }
    }
    let base = doc.base()?;
    print!("{}", base.to_toml(doc.sweep_table()));
    let units: usize = points
        .iter()
        .map(|p| p.scenario.strategies.len() * p.scenario.replications as usize)
        .sum();
    say(&format!(
        "ok: {} point(s), {} strategies, {} run(s)",
        points.len(),
        base.strategies.len(),
        units
    ));
    Ok(())
}

fn list(args: ListArgs) -> Result<()> {
    // Without --dir, a checkout's sims/ is shown beside the built-ins; elsewhere there is none.
    let local = match &args.dir {
        Some(dir) => Some(dir.as_path()),
        None => Some(Path::new("sims")).filter(|d| d.is_dir()),
    };
    let entries = library::catalog(local)?;
    // A local file's name and text are anyone's: shown escaped and shortened.
    use jitterlab::text::{for_terminal, pad, shown};
    let files: Vec<String> = entries
        .iter()
        .map(|e| match &e.file {
            Some(p) if e.differs => format!("{} (differs)", shown(&p.display().to_string())),
            Some(p) => shown(&p.display().to_string()),
            None => String::new(),
        })
        .collect();
    let names: Vec<String> = entries.iter().map(|e| shown(&e.name)).collect();
    let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let file_width = files.iter().map(|f| f.chars().count()).max().unwrap_or(0);
    for ((entry, name), file) in entries.iter().zip(&names).zip(&files) {
        let kind = if entry.builtin { "built-in" } else { "local" };
        let mut line = format!("{}  {kind:<8}  ", pad(name, name_width, false));
        if file_width > 0 {
            line += &pad(file, file_width, false);
            line += "  ";
        }
        line += &for_terminal(&entry.description);
        println!("{}", line.trim_end());
    }
    Ok(())
}

fn init(args: InitArgs) -> Result<()> {
    let builtin = library::lookup(&args.name)?;
    let file = args
        .file
        .unwrap_or_else(|| PathBuf::from(format!("{}.toml", builtin.name)));
    builtin.write_new(&file)?;
    say(&format!(
        "wrote {} (built-in scenario {}); edit it, then `jitterlab run {}`",
        file.display(),
        builtin.name,
        file.display()
    ));
    Ok(())
}

fn merge(args: MergeArgs) -> Result<()> {
    let report = runner::merge(&args.dirs, &args.out, &command_line(), args.force)?;
    finish(
        &report,
        args.no_plots,
        false,
        &Shard::ALL,
        &CancelToken::new(),
    )
}

/// Names a backoff parameter by the `delays` flag that set it: each flag is named after its
/// field (`cap` is set by `--cap`).
fn as_flag(e: ParamError) -> Error {
    Error::for_key(format!("--{}", e.field), e)
}

fn delays(args: DelaysArgs) -> Result<()> {
    // The engine takes std durations; every `SimDuration` converts exactly.
    let duration = |flag: &str, text: &str| -> Result<std::time::Duration> {
        parse_duration(flag, text).map(SimDuration::to_std)
    };
    let request = DelaysRequest {
        jitters: parse_jitters(&args.jitter).map_err(|e| Error::for_key("--jitter", e))?,
        params: BackoffParams {
            jitter: jitterlab::backoff::Jitter::Full,
            base: duration("--base", &args.base)?,
            multiplier: args.multiplier,
            cap: duration("--cap", &args.cap)?,
            growth: args.growth,
            factor: args.factor,
        },
        retries: args.retries,
        samples: args.samples,
        seed: args.seed,
    };
    request.policies().map_err(as_flag)?;
    if let Some(path) = &args.plot {
        let mut samples = Vec::with_capacity(
            (request.samples as usize)
                .saturating_mul(request.retries as usize)
                .min(1 << 24),
        );
        request.for_each(|s| {
            samples.push((s.jitter, s.retry, s.delay_ns as f64 / 1e6));
            Ok(())
        })?;
        if args.force {
            jitterlab::output::plot::draw_delays(&samples, path)?;
        } else {
            jitterlab::output::plot::draw_delays_new(&samples, path)?;
        }
    }
    let stdout = std::io::stdout().lock();
    match request.write_csv(stdout) {
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
