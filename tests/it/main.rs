//! The root package's integration tests, one binary (one link, one copy of the shared
//! helpers). Each module is what was a test file of its own; `cargo test --test it NAME::`
//! runs one module's tests. The tests that measure their own process (threads, peak
//! memory) and the documents' commands stay binaries of their own beside this directory.

#[path = "../common/mod.rs"]
mod common;

#[path = "../common/conditions.rs"]
mod conditions_support;
#[path = "../common/inventory.rs"]
mod inventory_support;
#[path = "../common/oauth.rs"]
mod oauth_support;
#[path = "../contract/openapi.rs"]
#[allow(dead_code)]
mod openapi;
#[path = "../../crates/marketplace-client-postgres/tests/support/pg.rs"]
mod pg;
#[path = "../common/taxonomy.rs"]
mod taxonomy_support;

mod account_contract;
mod aio;
mod aio_decode;
mod analytics_contract;
mod answers_serialize;
mod api_request;
mod aspects;
mod atomic;
mod blocking_in_runtime;
mod build_live;
mod category_types;
mod cli_output;
mod compiled_conditions;
mod compiled_structure;
mod consent_ebay_user;
mod contract;
mod decode;
mod duration_settings;
mod fake_ebay_clients;
mod fake_fidelity;
mod fake_trees;
mod import;
mod interrupted_commit;
mod inventory_contract;
mod inventory_refusals;
mod inventory_scopes;
mod item_conditions;
mod listing_cards;
mod listing_cli;
mod listing_groups;
mod listing_publish_group;
mod metadata_contract;
mod module_cycles;
mod mutation;
mod oauth_consent;
mod oauth_consent_cli;
mod oauth_grants;
mod oauth_pending_consent;
mod oauth_provider;
mod oauth_secrets;
mod oauth_store;
mod orders_cli;
mod orders_fake;
mod orders_ship_cli;
mod own_project;
mod phash;
mod pinned_aspects;
mod readme;
mod refresh;
mod refund_contract;
mod ship_contract;
mod signing_contract;
mod signing_fake;
mod signing_keys_file;
mod signing_vectors;
mod site_names;
mod snapshot_validation;
mod structure_contract;
mod taxonomy_client;
mod taxonomy_ops;
mod token_store;
mod tracing;
mod unauthorized;
