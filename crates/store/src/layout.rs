//! How a run's histograms are laid out in the tables, shared by the code
//! that writes a run (`save`) and the code that reads it back (`query`).

/// Tag stored with each histogram, so a later kvbench that changes the
/// encoding can tell old rows from new ones.
pub(crate) const HISTOGRAM_ENCODING: &str = "hdr-v2-base64";

/// Each histogram measure an `OpResult` can carry, with its JSON field: they
/// are stored as rows of the `histograms` table, never inside the phase JSON.
pub(crate) const MEASURES: [(&str, &str); 5] = [
    ("latency", "histogram"),
    ("service", "service_histogram"),
    ("lag", "lag_histogram"),
    ("miss", "miss_histogram"),
    ("app", "app_histogram"),
];

/// The JSON field of a `SeriesPoint` that is stored as a row of the
/// `interval_histograms` table, never inside the phase JSON.
pub(crate) const SERIES_HISTOGRAM: &str = "histogram";
