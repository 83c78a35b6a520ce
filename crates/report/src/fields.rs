//! Field-by-field differences between two JSON documents (a run's config,
//! environment or labels as serde writes them), so that a field added to the
//! model later is compared without a line changed here.
//!
//! Objects are walked key by key. Arrays of objects that all carry a string
//! `name` (server settings) and arrays of `[name, value]` pairs (workload
//! properties) are matched by name, so one inserted entry is one difference
//! and not a shifted tail; other arrays are matched by position.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One field whose value differs; a side without the field has `None`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// Where the field is: `clients`, `netns.link_delay_us`,
    /// `server_settings[-m].value`, `workload_properties[recordcount]`.
    pub field: String,
    /// A's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<Value>,
    /// B's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Value>,
}

/// Every leaf where `a` and `b` differ, in key order.
pub fn changes(a: &Value, b: &Value) -> Vec<FieldChange> {
    let mut out = Vec::new();
    walk(String::new(), Some(a), Some(b), &mut out);
    out
}

fn walk(path: String, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<FieldChange>) {
    if a == b {
        return;
    }
    match (a, b) {
        (Some(Value::Object(x)), Some(Value::Object(y))) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                walk(join(&path, k), x.get(k), y.get(k), out);
            }
        }
        (Some(Value::Array(x)), Some(Value::Array(y))) => match (by_name(x), by_name(y)) {
            (Some(x), Some(y)) => {
                let names: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for n in names {
                    walk(format!("{path}[{n}]"), x.get(n), y.get(n), out);
                }
            }
            _ => {
                for i in 0..x.len().max(y.len()) {
                    walk(format!("{path}[{i}]"), x.get(i), y.get(i), out);
                }
            }
        },
        _ => out.push(FieldChange {
            field: path,
            a: a.cloned(),
            b: b.cloned(),
        }),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// The entries of `items` by name, when every one has a distinct name: an
/// object's `name` field (the object without it is the value), or the first
/// of a two-element array (the second is the value).
fn by_name(items: &[Value]) -> Option<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for item in items {
        let (name, value) = match item {
            Value::Object(o) => {
                let name = o.get("name")?.as_str()?.to_string();
                let rest: Map<String, Value> = o
                    .iter()
                    .filter(|(k, _)| *k != "name")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                (name, Value::Object(rest))
            }
            Value::Array(pair) if pair.len() == 2 => {
                (pair[0].as_str()?.to_string(), pair[1].clone())
            }
            _ => return None,
        };
        if out.insert(name, value).is_some() {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(a: Value, b: Value) -> Vec<(String, Option<Value>, Option<Value>)> {
        changes(&a, &b)
            .into_iter()
            .map(|c| (c.field, c.a, c.b))
            .collect()
    }

    #[test]
    fn only_differing_leaves_with_readable_paths() {
        let a = json!({
            "clients": 1, "workload": "w", "netns": null,
            "server_settings": [{"name": "save", "value": "", "reason": "r"}],
            "workload_properties": [["recordcount", "10"], ["fieldcount", "2"]],
            "marks": ["x"],
            "deep": {"k": 1, "same": true}
        });
        let b = json!({
            "clients": 8, "workload": "w", "netns": {"link_delay_us": 50.0},
            "server_settings": [{"name": "save", "value": "", "reason": "r"},
                                {"name": "-m", "value": "64", "reason": "r"}],
            "workload_properties": [["fieldcount", "2"], ["recordcount", "20"]],
            "marks": ["x", "y"],
            "deep": {"k": 2, "same": true},
            "new_field": "n"
        });
        assert_eq!(
            fields(a, b),
            vec![
                ("clients".into(), Some(json!(1)), Some(json!(8))),
                ("deep.k".into(), Some(json!(1)), Some(json!(2))),
                ("marks[1]".into(), None, Some(json!("y"))),
                (
                    "netns".into(),
                    Some(json!(null)),
                    Some(json!({"link_delay_us": 50.0}))
                ),
                ("new_field".into(), None, Some(json!("n"))),
                (
                    "server_settings[-m]".into(),
                    None,
                    Some(json!({"value": "64", "reason": "r"}))
                ),
                (
                    "workload_properties[recordcount]".into(),
                    Some(json!("10")),
                    Some(json!("20"))
                ),
            ]
        );
        assert!(changes(&json!({"a": [1, 2]}), &json!({"a": [1, 2]})).is_empty());
    }
}
