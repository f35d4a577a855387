//! A grouped bar chart of GB/s per case (stridex, the device copy, Burn, plain Rust on the host)
//! as a standalone SVG.

use crate::report::Outcome;

const BAR: f64 = 12.0;
const GAP: f64 = 14.0;
const LABEL: f64 = 330.0;
const PLOT: f64 = 460.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

pub fn svg(cases: &[Outcome]) -> String {
    let series: [(&str, &str); 4] =
        [("stridex", "#2f6fb0"), ("device copy", "#9aa5b1"), ("Burn", "#e07b39"), ("Rust (host)", "#5a9e5a")];
    let max = cases
        .iter()
        .flat_map(|o| {
            [Some(o.stridex), Some(o.copy), o.burn, Some(o.rust)].into_iter().flatten().map(|t| o.gbps(t))
        })
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let group = series.len() as f64 * BAR + GAP;
    let height = 50.0 + group * cases.len() as f64 + 40.0;
    let width = LABEL + PLOT + 90.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"18\" font-size=\"13\">Effective bandwidth, GB/s (bytes read + written / time); same device, same run</text>\n"
    );
    for (i, (name, color)) in series.iter().enumerate() {
        let x = LABEL + i as f64 * 110.0;
        s.push_str(&format!(
            "<rect x=\"{x}\" y=\"28\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"37\">{name}</text>\n",
            x + 14.0
        ));
    }
    for (row, o) in cases.iter().enumerate() {
        let y0 = 50.0 + row as f64 * group;
        s.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
            LABEL - 8.0,
            y0 + series.len() as f64 * BAR / 2.0 + 4.0,
            escape(o.case)
        ));
        for (i, t) in [Some(o.stridex), Some(o.copy), o.burn, Some(o.rust)].into_iter().enumerate() {
            let y = y0 + i as f64 * BAR;
            let Some(t) = t else {
                s.push_str(&format!(
                    "<text x=\"{}\" y=\"{}\" fill=\"#666\">n/a</text>\n",
                    LABEL + 2.0,
                    y + BAR - 2.0
                ));
                continue;
            };
            let g = o.gbps(t);
            let w = (g / max * PLOT).max(1.0);
            s.push_str(&format!(
                "<rect x=\"{LABEL}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"/>\
                 <text x=\"{:.1}\" y=\"{}\">{g:.2}</text>\n",
                BAR - 1.0,
                series[i].1,
                LABEL + w + 4.0,
                y + BAR - 2.0
            ));
        }
    }
    s.push_str("</svg>\n");
    s
}
