//! OAuth 2.0 client (placeholder, being written).
