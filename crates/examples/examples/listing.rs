//! The README's main job: listing code that names its categories with `category!` (checked
//! at compile time) and looks categories up in all four sites, offline.
//!
//! Run it with `cargo run -p taxonomy-examples --example listing`.

use taxonomy_data::{LeafCategory, Site};
use taxonomy_macros::category;

/// A listing can only be built with a leaf category: an unchecked id cannot reach it.
struct Listing {
    title: &'static str,
    category: LeafCategory,
}

/// Checked at compile time, in a `const` item.
const SMARTPHONES: LeafCategory = category!("9355").leaf();

fn main() {
    let listings = [
        Listing {
            title: "Unlocked smartphone, 128 GB",
            category: SMARTPHONES,
        },
        Listing {
            title: "Smartphone, entsperrt, 128 GB",
            category: category!(EBAY_DE, "9355").leaf(),
        },
        Listing {
            title: "Mobile phone, unlocked",
            category: category!(
                EBAY_GB,
                "Mobile Phones & Communication > Mobile & Smart Phones"
            )
            .leaf(),
        },
        Listing {
            title: "Mobile phone, 5G",
            category: category!(EBAY_AU, "9355").leaf(),
        },
    ];
    println!("Listings, with categories checked at compile time:");
    for listing in &listings {
        let c = listing.category;
        println!(
            "  {:<32} {} {:>6}  {}",
            listing.title,
            c.site(),
            c.id(),
            c.path()
        );
    }

    println!("\nThe compiled-in trees:");
    for site in Site::compiled_in() {
        println!(
            "  {} (tree {:>2}, {}): {:>6} categories, {:>6} leaves, version {}, taken {}",
            site,
            site.tree_id(),
            site.language(),
            site.category_count(),
            site.leaf_count(),
            site.tree_version(),
            site.taken_at()
        );
        println!(
            "      {} bytes of static tables ({:.1} per category)",
            site.table_bytes(),
            site.table_bytes() as f64 / site.category_count().max(1) as f64
        );
        if let Some(note) = site.note() {
            println!("      note: {note}");
        }
        match site.condition_policies_source() {
            Some(source) => println!(
                "      condition policies: {} bytes, from {source}{}",
                site.condition_table_bytes(),
                if site.condition_policies_made_up() {
                    " (made up by a fake marketplace: not the marketplace's rules)"
                } else {
                    ""
                }
            ),
            None => println!(
                "      condition policies: none (`snapshot refresh` with credentials writes {}.conditions.json)",
                site.marketplace_id()
            ),
        }
    }

    println!("\nLookups by id at run time (no allocation, no parsing):");
    for site in Site::compiled_in() {
        match site.category(15032) {
            Some(c) => println!(
                "  {site} 15032 {:?}: leaf {}, level {}, {} children, e.g. {}",
                c.name(),
                c.is_leaf(),
                c.level(),
                c.children().len(),
                c.children().next().map_or(String::new(), |k| k.to_string())
            ),
            None => println!("  {site} has no category 15032"),
        }
    }

    println!("\nRun-time checks of ids that come from outside (a form, a file):");
    let market = Site::from_marketplace_id("EBAY_US").expect("a known marketplace");
    for id in [9355, 15032, 4_242_424] {
        match LeafCategory::new(market, id) {
            Ok(leaf) => println!("  {id}: ok, {leaf}"),
            Err(e) => println!("  {id}: rejected: {e}"),
        }
    }
}
