//! What the contract test needs of an OpenAPI 3 document: its operations (method, path,
//! parameters, response codes with their schemas and documented error ids), answers generated
//! from a schema (every field absent, or every field present with a distinct value), and a
//! check that a JSON value has the shape a schema describes.
//!
//! Only the subset eBay's Taxonomy description uses is read: `$ref` to
//! `#/components/schemas/…`, objects with `properties`, arrays with `items`, and the scalar
//! types `string`, `integer`, `number` and `boolean`. Anything else fails loudly, so a new
//! version that uses more is noticed.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Map, Value};

/// The document.
pub struct Document {
    raw: Value,
}

/// One operation.
#[derive(Debug, Clone)]
pub struct Operation {
    /// `operationId`, e.g. `getCategoryTree`.
    pub id: String,
    /// `GET`, …
    pub method: String,
    /// The full path template, the server's base path included:
    /// `/commerce/taxonomy/v1/category_tree/{category_tree_id}`.
    pub path: String,
    /// Its parameters.
    pub parameters: Vec<Parameter>,
    /// Every documented response, by status code.
    pub responses: BTreeMap<u16, DocumentedResponse>,
    /// The OAuth scopes of its security requirement.
    pub scopes: Vec<String>,
}

/// One parameter of an operation.
#[derive(Debug, Clone)]
pub struct Parameter {
    /// Its name (`category_id`, `Accept-Encoding`).
    pub name: String,
    /// `path`, `query` or `header`.
    pub location: String,
    /// Whether the document marks it required.
    pub required: bool,
}

/// One documented response of an operation.
#[derive(Debug, Clone)]
pub struct DocumentedResponse {
    /// The name of the body's schema (`CategoryTree`), when the response has a body.
    pub schema: Option<String>,
    /// The error ids listed for it (`x-response-codes`).
    pub errors: Vec<DocumentedError>,
}

/// An error id the document lists for a response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentedError {
    /// `62004`, …
    pub id: u32,
    /// `API_TAXONOMY`.
    pub domain: String,
    /// `REQUEST`, `APPLICATION`, …
    pub category: String,
    /// What it means.
    pub description: String,
}

impl Operation {
    /// The path with `{name}` replaced by each value of `values`.
    pub fn path_with(&self, values: &[(&str, &str)]) -> String {
        let mut path = self.path.clone();
        for (name, value) in values {
            path = path.replace(&format!("{{{name}}}"), value);
        }
        path
    }

    /// Whether `path` (no query) matches the template.
    pub fn matches(&self, path: &str) -> bool {
        let template: Vec<&str> = self.path.split('/').collect();
        let parts: Vec<&str> = path.split('/').collect();
        template.len() == parts.len()
            && template
                .iter()
                .zip(&parts)
                .all(|(t, p)| (t.starts_with('{') && !p.is_empty()) || t == p)
    }

    /// The parameters in `location`.
    pub fn parameters_in<'a>(&'a self, location: &'a str) -> impl Iterator<Item = &'a Parameter> {
        self.parameters
            .iter()
            .filter(move |p| p.location == location)
    }
}

fn text(v: &Value, what: &str) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("{what} is not a string: {v}"))
        .to_owned()
}

impl Document {
    /// Reads the document at `path`.
    pub fn load(path: &Path) -> Self {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let raw = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        Self { raw }
    }

    /// `info.version`.
    pub fn version(&self) -> String {
        text(&self.raw["info"]["version"], "info.version")
    }

    /// The base path of the first server (`/commerce/taxonomy/v1`).
    pub fn base_path(&self) -> String {
        let server = &self.raw["servers"][0];
        let url = text(&server["url"], "servers[0].url");
        let default = server["variables"]["basePath"]["default"]
            .as_str()
            .unwrap_or_default();
        let url = url.replace("{basePath}", default);
        let after_scheme = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
        after_scheme
            .find('/')
            .map_or(String::new(), |i| after_scheme[i..].to_owned())
    }

    /// Every operation, in the document's order.
    pub fn operations(&self) -> Vec<Operation> {
        let base = self.base_path();
        let mut out = Vec::new();
        let paths = self.raw["paths"].as_object().expect("paths");
        for (path, item) in paths {
            for (method, op) in item.as_object().expect("a path item") {
                // A path item also holds `servers` (the Account API's location calls are
                // on another host), `parameters`, …: only its HTTP methods are operations.
                if !["get", "put", "post", "delete", "patch", "head", "options"]
                    .contains(&method.as_str())
                {
                    continue;
                }
                let id = text(&op["operationId"], "operationId");
                let parameters = op["parameters"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .map(|p| Parameter {
                        name: text(&p["name"], "a parameter's name"),
                        location: text(&p["in"], "a parameter's `in`"),
                        required: p["required"].as_bool().unwrap_or(false),
                    })
                    .collect();
                let mut responses = BTreeMap::new();
                for (code, response) in op["responses"].as_object().expect("responses") {
                    let code: u16 = code
                        .parse()
                        .unwrap_or_else(|_| panic!("{id}: response code {code:?}"));
                    let schema = response["content"]
                        .as_object()
                        .and_then(|c| c.values().next())
                        // An inline schema (some of the Inventory API's) has no name.
                        .filter(|media| media["schema"].get("$ref").is_some())
                        .map(|media| self.ref_name(&media["schema"]));
                    let mut errors = Vec::new();
                    if let Some(listed) = response["x-response-codes"]["errors"].as_object() {
                        for (eid, e) in listed {
                            errors.push(DocumentedError {
                                id: eid.parse().unwrap_or_else(|_| panic!("error id {eid:?}")),
                                domain: text(&e["domain"], "an error's domain"),
                                category: text(&e["category"], "an error's category"),
                                description: text(&e["description"], "an error's description"),
                            });
                        }
                    }
                    responses.insert(code, DocumentedResponse { schema, errors });
                }
                let scopes = op["security"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(Value::as_object)
                    .flat_map(|req| req.values())
                    .filter_map(Value::as_array)
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                out.push(Operation {
                    id,
                    method: method.to_ascii_uppercase(),
                    path: format!("{base}{path}"),
                    parameters,
                    responses,
                    scopes,
                });
            }
        }
        out
    }

    /// The schema name a `{"$ref": "#/components/schemas/X"}` names.
    fn ref_name(&self, schema: &Value) -> String {
        let reference = text(&schema["$ref"], "a response schema's $ref");
        reference
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unsupported $ref {reference}"))
            .to_owned()
    }

    /// The schema named `name`.
    pub fn schema(&self, name: &str) -> &Value {
        let s = &self.raw["components"]["schemas"][name];
        assert!(s.is_object(), "no schema {name}");
        s
    }

    /// `schema` with its `$ref` followed, and the name it came by.
    fn resolve<'a>(&'a self, schema: &'a Value) -> (&'a Value, Option<String>) {
        match schema.get("$ref") {
            Some(_) => {
                let name = self.ref_name(schema);
                (self.schema(&name), Some(name))
            }
            None => (schema, None),
        }
    }

    /// The schema's type (`object` when it has properties but no type).
    fn type_of(schema: &Value) -> &str {
        match schema["type"].as_str() {
            Some(t) => t,
            None if schema.get("properties").is_some() => "object",
            None => panic!("a schema without a type: {schema}"),
        }
    }

    /// An answer of the schema `name` with every field present: objects with all their
    /// properties, arrays with one element (none where a type would recur a third time, so
    /// a recursive tree stays finite), and each scalar distinct from every other: a
    /// property whose name ends in `Id` is a decimal string (eBay's ids), another string is
    /// `<name>-<n>`, an integer is `<n>`, a boolean `true`.
    pub fn all_present(&self, name: &str) -> Value {
        let mut counter = 0;
        let mut stack = Vec::new();
        self.generate(self.schema(name), name, &mut counter, &mut stack)
    }

    fn generate(
        &self,
        schema: &Value,
        hint: &str,
        counter: &mut u32,
        stack: &mut Vec<String>,
    ) -> Value {
        let (schema, via) = self.resolve(schema);
        if let Some(name) = &via {
            stack.push(name.clone());
        }
        let value = match Self::type_of(schema) {
            "object" => {
                let mut object = Map::new();
                for (key, property) in schema["properties"].as_object().into_iter().flatten() {
                    object.insert(key.clone(), self.generate(property, key, counter, stack));
                }
                Value::Object(object)
            }
            "array" => {
                let items = &schema["items"];
                let recurs = self
                    .resolve(items)
                    .1
                    .is_some_and(|n| stack.iter().filter(|s| **s == n).count() >= 2);
                if recurs {
                    Value::Array(Vec::new())
                } else {
                    Value::Array(vec![self.generate(items, hint, counter, stack)])
                }
            }
            "string" => {
                *counter += 1;
                if hint.ends_with("Id") {
                    Value::String((100_000 + *counter).to_string())
                } else {
                    Value::String(format!("{hint}-{counter}"))
                }
            }
            "integer" | "number" => {
                *counter += 1;
                Value::from(*counter)
            }
            "boolean" => Value::Bool(true),
            other => panic!("unsupported schema type {other}"),
        };
        if via.is_some() {
            stack.pop();
        }
        value
    }

    /// An answer of the schema `name` with every optional field absent, but each array
    /// holding one such element: `{}` at the top, `{"aspects": [{}]}` one level down is
    /// [`skeleton`](Self::skeleton). (The document marks no field required.)
    pub fn all_absent(&self, name: &str) -> Value {
        let (schema, _) = self.resolve(self.schema(name));
        assert_eq!(Self::type_of(schema), "object", "{name}");
        assert!(
            schema.get("required").is_none(),
            "{name} now has required fields: the all-absent answer must keep them"
        );
        Value::Object(Map::new())
    }

    /// [`all_present`](Self::all_present) with every scalar field removed, and every object
    /// that then holds no array: the absence of each optional field below the top, where
    /// arrays still hold one element (`{"aspects": [{"aspectValues": [{…}]}]}`).
    pub fn skeleton(&self, name: &str) -> Value {
        fn skeleton(v: &Value) -> Option<Value> {
            match v {
                Value::Object(m) => Some(Value::Object(
                    m.iter()
                        .filter_map(|(k, v)| skeleton(v).map(|v| (k.clone(), v)))
                        .filter(|(_, v)| {
                            v.is_array() || v.as_object().is_some_and(|o| !o.is_empty())
                        })
                        .collect(),
                )),
                Value::Array(items) => {
                    Some(Value::Array(items.iter().filter_map(skeleton).collect()))
                }
                _ => None,
            }
        }
        skeleton(&self.all_present(name)).unwrap_or_default()
    }

    /// Every way `value` departs from the schema `name`: a property the schema does not
    /// list, or a value of another type. Each problem names its JSON pointer.
    pub fn conformance(&self, value: &Value, name: &str) -> Vec<String> {
        let mut problems = Vec::new();
        self.check(value, self.schema(name), "", &mut problems);
        problems
    }

    fn check(&self, value: &Value, schema: &Value, at: &str, problems: &mut Vec<String>) {
        let (schema, _) = self.resolve(schema);
        let ok = match (Self::type_of(schema), value) {
            (_, Value::Null) => {
                problems.push(format!("{at}: null"));
                return;
            }
            ("object", Value::Object(m)) => {
                let properties = schema["properties"].as_object();
                for (key, v) in m {
                    match properties.and_then(|p| p.get(key)) {
                        Some(s) => self.check(v, s, &format!("{at}/{key}"), problems),
                        None => problems.push(format!("{at}/{key}: not in the schema")),
                    }
                }
                true
            }
            ("array", Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    self.check(item, &schema["items"], &format!("{at}/{i}"), problems);
                }
                true
            }
            ("string", Value::String(_)) | ("boolean", Value::Bool(_)) => true,
            ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
            ("number", Value::Number(_)) => true,
            _ => false,
        };
        if !ok {
            problems.push(format!(
                "{at}: {value} is not of type {}",
                Self::type_of(schema)
            ));
        }
    }
}

/// The JSON pointer of every scalar in `value`.
pub fn scalar_pointers(value: &Value) -> Vec<String> {
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    walk(v, format!("{at}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{at}/{i}"), out);
                }
            }
            _ => out.push(at),
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

/// `value` with the scalar at `pointer` changed to another value of its type: a decimal
/// string gets another digit, another string a suffix, a number one more, a boolean negated.
pub fn changed_at(value: &Value, pointer: &str) -> Value {
    let mut out = value.clone();
    let slot = out
        .pointer_mut(pointer)
        .unwrap_or_else(|| panic!("no {pointer}"));
    *slot = match slot.take() {
        Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => {
            Value::String(format!("{s}7"))
        }
        Value::String(s) => Value::String(format!("{s}-changed")),
        Value::Number(n) => Value::from(n.as_u64().expect("a non-negative integer") + 1),
        Value::Bool(b) => Value::Bool(!b),
        other => panic!("{pointer} is not a scalar: {other}"),
    };
    out
}

/// `pointer` with its array indexes replaced by `*`: `/aspects/*/aspectValues/*/localizedValue`.
pub fn pattern_of(pointer: &str) -> String {
    pointer
        .split('/')
        .map(|p| {
            if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                p
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}
