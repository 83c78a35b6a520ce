//! The report's files: `index.html` (figures inline as SVG, styles inline,
//! no script, nothing fetched), `report.md` (the same content, figures as
//! PNG links), and `figures/ID.svg` and `figures/ID.png`. The pages are
//! minijinja templates (`templates/`) over plain data built here; HTML is
//! escaped by the engine, and only the SVG that `plot` drew is passed as
//! markup.

use crate::cells::{Cell, Source};
use crate::figure::{Figure, FigureKind};
use crate::format;
use crate::plot::{self, Palette};
use crate::repro::Repro;
use crate::takeaways::{self, Verdict};
use minijinja::{context, Environment, Value};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a report is made from.
#[derive(Debug, Clone)]
pub struct Input {
    /// The page's heading.
    pub title: String,
    /// The runs, in the order they should be listed.
    pub sources: Vec<Source>,
    /// The experiment file's text, when the report is of an experiment
    /// whose file is known.
    pub experiment_file: Option<String>,
    /// Commands that measure again and redraw this report.
    pub commands: Vec<String>,
    /// When the report was generated (RFC 3339).
    pub generated_at: String,
    /// A paper whose findings the report sets beside the measurements
    /// (`kvbench reproduce`).
    pub paper: Option<crate::paper::Paper>,
    /// How the takeaways call their verdicts (margin, repeated looks).
    pub rule: takeaways::Rule,
}

/// A rendered report: its files by path relative to the output
/// directory, and what it holds (the runs' [`Summary`], or the analytics
/// page's).
#[derive(Debug, Clone)]
pub struct Rendered<S = Summary> {
    /// `index.html`, `report.md`, `figures/ID.svg`, `figures/ID.png`.
    pub files: Vec<(String, Vec<u8>)>,
    /// What a program can read about the report (`--json`).
    pub summary: S,
}

/// The report in numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Runs read.
    pub runs: usize,
    /// Cells they form.
    pub cells: usize,
    /// Figure ids, in page order.
    pub figures: Vec<String>,
    /// The takeaways matrix.
    pub takeaways: Vec<Verdict>,
    /// The takeaways in words.
    pub summary: Vec<String>,
    /// The paper's findings beside the measurements, when there is a paper.
    pub paper: Vec<crate::paper::Outcome>,
}

#[derive(Serialize)]
pub(crate) struct FigureView {
    id: String,
    title: String,
    caption: String,
    svg: Value,
    flags: Vec<String>,
}

/// A page's figures of one kind, under its heading.
#[derive(Serialize)]
pub(crate) struct Group {
    anchor: String,
    heading: &'static str,
    figures: Vec<FigureView>,
}

#[derive(Serialize)]
struct VerdictView {
    winner: Option<String>,
    /// `ahead`, `equal` or `undecided`.
    call: String,
    colour: String,
    margin: String,
    /// The throughput ratio's interval with its method, when there is one.
    interval: String,
    /// Server CPU per operation, p50 and p99 of the same pair (lower is
    /// better), each with its call.
    cpu: String,
    clients: String,
    note: String,
}

#[derive(Serialize)]
struct Row {
    workload: String,
    topology: String,
    cells: Vec<Option<VerdictView>>,
}

#[derive(Serialize)]
struct TableRow {
    label: String,
    colour: String,
    clients: u32,
    rate: String,
    throughput: String,
    flags: Vec<String>,
    op: String,
    p50: String,
    p99: String,
    p999: String,
    runs: String,
}

#[derive(Serialize)]
struct Table {
    title: String,
    open_loop: bool,
    rows: Vec<TableRow>,
}

#[derive(Serialize)]
struct MemoryRow {
    label: String,
    colour: String,
    topology: String,
    shape: String,
    raw: String,
    before_load: String,
    after_load: String,
    after_run: String,
    overhead: String,
}

#[derive(Serialize)]
struct RunRow {
    id: String,
    status: String,
    system: String,
    workload: String,
    clients: u32,
    notes: Vec<String>,
}

#[derive(Serialize)]
struct SystemView {
    label: String,
    colour: String,
}

/// Renders the report of `input`.
///
/// # Errors
/// A message when a stored histogram cannot be read or a figure cannot be
/// drawn.
pub fn render(input: &Input) -> Result<Rendered, String> {
    let cells = crate::cells::group(&input.sources)?;
    let figures = crate::figures::build(&cells, &input.sources);
    let palette = Palette::for_figures(&figures);
    let mut files = Vec::new();
    let groups = figure_groups(&figures, &palette, &mut files)?;
    let verdicts = takeaways::matrix(&cells, &input.rule);
    let sentences = takeaways::summary(&verdicts);
    let (bands, matrix) = matrix_rows(&verdicts, &palette);
    let repro = crate::repro::build(
        &input.sources,
        input.experiment_file.clone(),
        input.commands.clone(),
    );
    let mut systems: Vec<SystemView> = Vec::new();
    for c in &cells {
        if !systems.iter().any(|s| s.label == c.label) {
            systems.push(SystemView {
                label: c.label.clone(),
                colour: palette.hex(&c.system),
            });
        }
    }
    let paper = input
        .paper
        .as_ref()
        .map(|p| crate::paper::evaluate(p, &cells))
        .unwrap_or_default();
    let paper_view = input.paper.as_ref().map(|p| paper_view(p, &paper));
    let ctx = context! {
        paper => paper_view,
        title => input.title,
        generated_at => input.generated_at,
        kvbench_version => env!("CARGO_PKG_VERSION"),
        cell_count => cells.len(),
        systems => systems,
        verdicts => !verdicts.is_empty(),
        margin => takeaways::margin_text(input.rule.margin),
        looks => input.rule.looks,
        bands => bands,
        matrix => matrix,
        summary => sentences,
        tables => tables(&cells, &palette),
        combined => combined_rows(&cells, &palette),
        figure_groups => groups,
        memory => memory_rows(&cells, &palette),
        repro => repro_view(&repro),
        runs => run_rows(&input.sources),
    };
    files.extend(pages(
        include_str!("../templates/index.html.j2"),
        include_str!("../templates/report.md.j2"),
        &ctx,
    )?);
    Ok(Rendered {
        files,
        summary: Summary {
            runs: input.sources.len(),
            cells: cells.len(),
            figures: figures.iter().map(|f| f.id.clone()).collect(),
            takeaways: verdicts,
            summary: sentences,
            paper,
        },
    })
}

/// Draws every figure into `files` and groups them, in page order, under
/// their kind's heading.
pub(crate) fn figure_groups(
    figures: &[Figure],
    palette: &Palette,
    files: &mut Vec<(String, Vec<u8>)>,
) -> Result<Vec<Group>, String> {
    let mut groups: Vec<Group> = Vec::new();
    for f in figures {
        let view = FigureView {
            id: f.id.clone(),
            title: f.title.clone(),
            caption: f.caption.clone(),
            svg: draw(f, palette, files)?,
            flags: f.flag_notes(),
        };
        match groups.last_mut() {
            Some(g) if g.heading == f.kind.heading() => g.figures.push(view),
            _ => groups.push(Group {
                anchor: anchor(f.kind),
                heading: f.kind.heading(),
                figures: vec![view],
            }),
        }
    }
    Ok(groups)
}

/// Draws `f` as SVG and PNG into `files` (`figures/ID.svg|png`) and
/// returns the SVG for inlining in the page.
fn draw(
    f: &Figure,
    palette: &Palette,
    files: &mut Vec<(String, Vec<u8>)>,
) -> Result<Value, String> {
    let svg = plot::svg(f, palette).map_err(|e| format!("figure {}: {e}", f.id))?;
    let png = plot::png(&svg).map_err(|e| format!("figure {}: {e}", f.id))?;
    let inlined = Value::from_safe_string(inline(&svg, &f.title));
    files.push((format!("figures/{}.svg", f.id), svg.into_bytes()));
    files.push((format!("figures/{}.png", f.id), png));
    Ok(inlined)
}

/// The paper-vs-kvbench section's data.
pub(crate) fn paper_view(p: &crate::paper::Paper, outcomes: &[crate::paper::Outcome]) -> Value {
    let tally = |v: crate::paper::Verdict| outcomes.iter().filter(|o| o.verdict == v).count();
    context! {
        title => p.paper,
        hardware => p.hardware,
        substitutions => p.substitutions,
        not_reproducible => p.not_reproducible,
        outcomes => outcomes,
        agrees => tally(crate::paper::Verdict::Agrees),
        differs => tally(crate::paper::Verdict::Differs),
        inconclusive => tally(crate::paper::Verdict::Inconclusive),
        not_measured => tally(crate::paper::Verdict::NotMeasured),
        not_comparable => tally(crate::paper::Verdict::NotComparable),
    }
}

/// `index.html` and `report.md` from their templates (which may include
/// the shared `style.html`) over `ctx`.
pub(crate) fn pages(
    index: &str,
    markdown: &str,
    ctx: &Value,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut env = Environment::new();
    for (name, text) in [
        ("style.html", include_str!("../templates/style.html.j2")),
        ("index.html", index),
        ("report.md", markdown),
    ] {
        env.add_template(name, text)
            .map_err(|e| format!("template {name}: {e}"))?;
    }
    let mut files = Vec::new();
    for name in ["index.html", "report.md"] {
        let text = env
            .get_template(name)
            .and_then(|t| t.render(ctx))
            .map_err(|e| format!("{name}: {e:#}"))?;
        files.push((name.to_string(), text.into_bytes()));
    }
    Ok(files)
}

fn repro_view(r: &Repro) -> Value {
    Value::from_serialize(r)
}

fn anchor(kind: FigureKind) -> String {
    format!(
        "figures-{}",
        serde_json::to_value(kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    )
}

/// The SVG without its XML prolog, labelled for screen readers, for
/// inlining in HTML.
pub(crate) fn inline(svg: &str, title: &str) -> String {
    let body = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    let escaped = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;");
    body.replacen(
        "<svg",
        &format!("<svg role=\"img\" aria-label=\"{escaped}\""),
        1,
    )
}

fn matrix_rows(verdicts: &[Verdict], palette: &Palette) -> (Vec<String>, Vec<Row>) {
    let mut bands: Vec<String> = Vec::new();
    for b in ["few", "many", "all"] {
        if verdicts.iter().any(|v| v.clients_band == b) {
            bands.push(b.to_string());
        }
    }
    let mut rows: BTreeMap<(String, String), Vec<&Verdict>> = BTreeMap::new();
    for v in verdicts {
        rows.entry((v.workload.clone(), v.topology.clone()))
            .or_default()
            .push(v);
    }
    let rows = rows
        .into_iter()
        .map(|((workload, topology), vs)| Row {
            workload,
            topology,
            cells: bands
                .iter()
                .map(|b| {
                    vs.iter()
                        .find(|v| v.clients_band == *b)
                        .map(|v| VerdictView {
                            winner: v.winner.clone(),
                            call: v.call().as_str().to_string(),
                            interval: v
                                .throughput
                                .interval
                                .as_ref()
                                .map(takeaways::interval_text)
                                .unwrap_or_default(),
                            cpu: [
                                ("server CPU/op", &v.server_cpu),
                                ("p50", &v.latency_p50),
                                ("p99", &v.latency_p99),
                            ]
                            .iter()
                            .filter_map(|(name, j)| {
                                j.as_ref().map(|j| takeaways::lower_text(name, j))
                            })
                            .collect::<Vec<_>>()
                            .join(" · "),
                            colour: palette.hex(v.winner_system.as_deref().unwrap_or("")),
                            margin: if v.margin.is_finite() {
                                format!("{:.0}%", v.margin * 100.0)
                            } else {
                                "∞".into()
                            },
                            clients: takeaways::clients(v.clients),
                            note: v.note.clone(),
                        })
                })
                .collect(),
        })
        .collect();
    let bands = bands
        .into_iter()
        .map(|b| match b.as_str() {
            "few" => "few clients".to_string(),
            "many" => "many clients".to_string(),
            _ => "clients".to_string(),
        })
        .collect();
    (bands, rows)
}

#[derive(Serialize)]
struct CombinedRow {
    series: String,
    colour: String,
    main: String,
    clients: u32,
    main_throughput: String,
    main_p50: String,
    with: String,
    with_throughput: String,
    with_p50: String,
    alone_throughput: String,
    alone_p50: String,
    slowdown: String,
}

fn combined_rows(cells: &[Cell], palette: &Palette) -> Vec<CombinedRow> {
    let name = |g: &crate::combined::Group| {
        format!(
            "{} ({}, {} x pipeline {})",
            g.workload,
            g.op,
            takeaways::clients(g.clients),
            g.pipeline
        )
    };
    crate::combined::rows(cells)
        .iter()
        .map(|r| CombinedRow {
            series: r.series.clone(),
            colour: palette.hex(&r.system),
            main: name(&r.main),
            clients: r.main.clients,
            main_throughput: format::rate(r.main.throughput),
            main_p50: format::micros(r.main.p50_us),
            with: name(&r.with),
            with_throughput: format::rate(r.with.throughput),
            with_p50: format::micros(r.with.p50_us),
            alone_throughput: r
                .alone
                .as_ref()
                .map_or("not measured".into(), |a| format::rate(a.throughput)),
            alone_p50: r
                .alone
                .as_ref()
                .map_or(String::new(), |a| format::micros(a.p50_us)),
            slowdown: r.slowdown().map_or(String::new(), |x| format!("{x:.1}x")),
        })
        .collect()
}

fn tables(cells: &[Cell], palette: &Palette) -> Vec<Table> {
    let mut by: BTreeMap<(String, String, String, u32, bool), Vec<&Cell>> = BTreeMap::new();
    for c in cells {
        by.entry((
            c.workload.clone(),
            c.topology.clone(),
            c.shape.clone(),
            c.pipeline,
            c.rate.is_some(),
        ))
        .or_default()
        .push(c);
    }
    by.into_iter()
        .map(
            |((workload, topology, shape, pipeline, open_loop), mut v)| {
                v.sort_by(|a, b| {
                    a.label
                        .cmp(&b.label)
                        .then(a.clients.cmp(&b.clients))
                        .then(a.rate.unwrap_or(0.0).total_cmp(&b.rate.unwrap_or(0.0)))
                });
                let op = crate::cells::main_op(&v);
                Table {
                    title: format!(
                        "{workload}, {topology}, {shape}, pipeline {pipeline}{}{}",
                        if open_loop { ", open loop" } else { "" },
                        op.map_or(String::new(), |o| format!(": {o} latency"))
                    ),
                    open_loop,
                    rows: v.iter().map(|c| table_row(c, op, palette)).collect(),
                }
            },
        )
        .collect()
}

fn table_row(c: &Cell, op: Option<kvbench_model::OpKind>, palette: &Palette) -> TableRow {
    let main = c.ops.iter().find(|o| Some(o.op) == op);
    let t = &c.throughput;
    let throughput = match t.ci95 {
        Some(h) => format!("{} ± {}", format::rate(t.mean), format::rate(h)),
        None => format::rate(t.mean),
    };
    TableRow {
        label: c.label.clone(),
        colour: palette.hex(&c.system),
        clients: c.clients,
        rate: c.rate.map(format::rate).unwrap_or_default(),
        throughput,
        flags: c.flag_names(),
        op: main.map(|o| o.op.as_str().to_string()).unwrap_or_default(),
        p50: main
            .map(|o| format::micros(o.merged.p50_us))
            .unwrap_or_default(),
        p99: main
            .map(|o| format::micros(o.merged.p99_us))
            .unwrap_or_default(),
        p999: main
            .map(|o| format::micros(o.merged.p999_us))
            .unwrap_or_default(),
        runs: c
            .run_ids
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn memory_rows(cells: &[Cell], palette: &Palette) -> Vec<MemoryRow> {
    let mut seen: Vec<(String, String, String)> = Vec::new();
    let mut out = Vec::new();
    let mib = |b: Option<f64>| {
        b.map_or("–".to_string(), |b| {
            format!("{:.1}", b / (1024.0 * 1024.0))
        })
    };
    for c in cells {
        let key = (c.label.clone(), c.topology.clone(), c.shape.clone());
        if c.memory.at("after_load").is_none() || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        out.push(MemoryRow {
            label: c.label.clone(),
            colour: palette.hex(&c.system),
            topology: c.topology.clone(),
            shape: c.shape.clone(),
            raw: format!("{:.1}", c.dataset_bytes as f64 / (1024.0 * 1024.0)),
            before_load: mib(c.memory.at("before_load")),
            after_load: mib(c.memory.at("after_load")),
            after_run: mib(c.memory.at("after_run")),
            overhead: takeaways::overhead(c)
                .map_or("–".into(), |o| format!("{:+.1}%", o * 100.0)),
        });
    }
    out
}

fn run_rows(sources: &[Source]) -> Vec<RunRow> {
    sources
        .iter()
        .map(|s| {
            let r = &s.record;
            let mut notes: Vec<String> = r
                .marks
                .iter()
                .chain(&r.warnings)
                .map(|m| m.to_string())
                .collect();
            if let Some(f) = &r.failure {
                notes.insert(0, format!("failed: {f}"));
            }
            RunRow {
                id: r.id.map(|i| i.to_string()).unwrap_or_default(),
                status: r.status.as_str().to_string(),
                system: format::server_label(r.config.system, &r.environment),
                workload: r.config.workload.clone(),
                clients: r.config.clients,
                notes,
            }
        })
        .collect()
}
