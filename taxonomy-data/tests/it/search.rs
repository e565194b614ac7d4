//! `Site::search`'s quality, over every leaf of every compiled-in site (the figures are
//! printed per site; run with `--nocapture` to see them):
//! - a leaf's name with its parent's name finds it in the top 3 for at least 95% of leaves;
//! - its name alone finds it in the top 3 for at least 95% of the leaves whose name at most
//!   two other leaves share ("Other" repeats dozens of times: no search can tell those apart);
//! - its full path finds it first, for every leaf whose path no other leaf has word for word
//!   (in any case, accents and plurals folded; those are counted and printed).

use std::collections::HashMap;

use taxonomy_data::{LeafCategory, SEARCH_RESULTS, Site};
use taxonomy_hash::words::{Language, Words};

fn rank_of(site: Site, query: &str, leaf: LeafCategory) -> Option<usize> {
    site.search(query).position(|found| found == leaf)
}

/// The folded words of a text (by the rules of the site's language), sorted: two paths with
/// the same are indistinguishable.
fn word_bag(site: Site, text: &str) -> Vec<Vec<u8>> {
    let mut words: Vec<Vec<u8>> = Words::with_language(text, Language::of(site.language()))
        .map(|w| w.as_bytes().to_vec())
        .collect();
    words.sort();
    words
}

struct Figures {
    leaves: usize,
    with_parent: usize,
    alone_eligible: usize,
    alone: usize,
    path_eligible: usize,
    path_first: usize,
    path_failures: Vec<String>,
}

fn measure(site: Site) -> Figures {
    let leaves: Vec<LeafCategory> = site.leaves().collect();
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut paths: HashMap<Vec<Vec<u8>>, usize> = HashMap::new();
    for leaf in &leaves {
        *names.entry(leaf.name()).or_default() += 1;
        *paths
            .entry(word_bag(site, &leaf.path().to_string()))
            .or_default() += 1;
    }
    let mut f = Figures {
        leaves: leaves.len(),
        with_parent: 0,
        alone_eligible: 0,
        alone: 0,
        path_eligible: 0,
        path_first: 0,
        path_failures: Vec::new(),
    };
    for &leaf in &leaves {
        let parent = leaf.category().parent().map_or("", |p| p.name());
        let query = format!("{} {parent}", leaf.name());
        if rank_of(site, &query, leaf).is_some_and(|r| r < 3) {
            f.with_parent += 1;
        } else if std::env::var_os("SEARCH_DEBUG").is_some() {
            eprintln!(
                "PARENT {} {:?}: {:?}",
                leaf.id(),
                leaf.path().to_string(),
                site.search(&query)
                    .take(4)
                    .map(|c| c.path().to_string())
                    .collect::<Vec<_>>()
            );
        }
        if names[leaf.name()] <= 3 {
            f.alone_eligible += 1;
            if rank_of(site, leaf.name(), leaf).is_some_and(|r| r < 3) {
                f.alone += 1;
            } else if std::env::var_os("SEARCH_DEBUG").is_some() {
                eprintln!(
                    "ALONE {} {:?}: {:?}",
                    leaf.id(),
                    leaf.path().to_string(),
                    site.search(leaf.name())
                        .take(4)
                        .map(|c| c.path().to_string())
                        .collect::<Vec<_>>()
                );
            }
        }
        let path = leaf.path().to_string();
        if paths[&word_bag(site, &path)] == 1 {
            f.path_eligible += 1;
            match rank_of(site, &path, leaf) {
                Some(0) => f.path_first += 1,
                other => f.path_failures.push(format!(
                    "{} {path:?}: rank {other:?}, first {:?}",
                    leaf.id(),
                    site.search(&path).next()
                )),
            }
        }
    }
    f
}

fn percent(part: usize, whole: usize) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

#[test]
fn every_leaf_of_every_site_is_found_by_its_names_and_its_path() {
    // One thread a site: the sites are independent, and the machines have several cores.
    let measured: Vec<(Site, Figures)> = std::thread::scope(|scope| {
        let threads: Vec<_> = Site::compiled_in()
            .map(|site| scope.spawn(move || (site, measure(site))))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(!measured.is_empty(), "no site is compiled in");
    for (site, f) in measured {
        println!(
            "{site}: {} leaves; name + parent's name: {:.2}% in the top 3; name alone: {:.2}% in the top 3 (of {} leaves whose name at most two others share); full path: {:.2}% first (of {} leaves with a path of their own; {} share theirs word for word)",
            f.leaves,
            percent(f.with_parent, f.leaves),
            percent(f.alone, f.alone_eligible),
            f.alone_eligible,
            percent(f.path_first, f.path_eligible),
            f.path_eligible,
            f.leaves - f.path_eligible,
        );
        assert!(
            percent(f.with_parent, f.leaves) >= 95.0,
            "{site}: name + parent's name"
        );
        assert!(
            percent(f.alone, f.alone_eligible) >= 95.0,
            "{site}: name alone"
        );
        assert!(
            f.path_failures.is_empty(),
            "{site}: {} full paths not first, e.g. {:#?}",
            f.path_failures.len(),
            &f.path_failures[..f.path_failures.len().min(10)]
        );
    }
}

#[test]
fn search_folds_case_accents_plurals_and_word_order() {
    let ids =
        |site: Site, query: &str| -> Vec<u32> { site.search(query).map(|c| c.id()).collect() };
    assert_eq!(
        ids(Site::Us, "SMARTPHONES cell phone"),
        ids(Site::Us, "phones cell smartphone")
    );
    assert_eq!(ids(Site::De, "Zubehör"), ids(Site::De, "ZUBEHOR"));
    assert!(
        ids(Site::Us, "smartphones")
            .iter()
            .take(3)
            .any(|&id| id == 9355)
    );
    assert!(Site::Us.search("cases covers skins").len() <= SEARCH_RESULTS);
    assert_eq!(Site::Us.search("  &  ").count(), 0);
    assert_eq!(Site::Us.search("qqqqzzzz").count(), 0);
    // Every result is a leaf of the site searched, and the order is stable.
    let found: Vec<LeafCategory> = Site::Gb.search("mobile phone cases").collect();
    assert!(!found.is_empty());
    assert!(
        found
            .iter()
            .all(|c| c.site() == Site::Gb && c.category().is_leaf())
    );
    assert_eq!(
        found,
        Site::Gb.search("mobile phone cases").collect::<Vec<_>>()
    );
}

/// What the index adds to what users of taxonomy-data compile: at most a tenth of the static
/// data of the other tables (figures per site printed; `--nocapture`).
#[test]
fn the_index_adds_at_most_a_tenth_of_the_static_data() {
    let (mut index, mut rest, mut categories) = (0, 0, 0);
    for site in Site::compiled_in() {
        let i = site.search_index_bytes();
        let r = site.table_bytes() - i;
        println!(
            "{site}: index {i} bytes ({:.2} a category), {:.2}% of the other tables' {r} bytes",
            i as f64 / site.category_count() as f64,
            100.0 * i as f64 / r as f64
        );
        (index, rest, categories) = (index + i, rest + r, categories + site.category_count());
    }
    println!(
        "all sites: index {index} bytes ({:.2} a category), {:.2}% of {rest} bytes",
        index as f64 / categories.max(1) as f64,
        100.0 * index as f64 / rest.max(1) as f64
    );
    assert!(
        index * 10 <= rest,
        "the index is over 10% of the static data"
    );
}

/// A query and the id of the leaf it means.
type SellerQuery = (&'static str, u32);

/// What sellers type, in their own language, and the leaf each means (checked against the
/// committed trees): compounds ("grafikkarte" for "Grafik-/Videokarten"), singulars of
/// German plurals ("fahrrad" for "Fahrräder"), everyday words. Per site: the queries and
/// how many of them must find their leaf in the top 5.
const SELLER_QUERIES: [(Site, usize, &[SellerQuery]); 4] = [
    (
        Site::De,
        12,
        &[
            ("grafikkarte", 27386), // … > Computer-Komponenten & -Teile > Grafik-/Videokarten
            ("armbanduhr", 31387),  // Uhren & Schmuck > Armband- & Taschenuhren > Armbanduhren
            ("bohrmaschine", 184654), // Heimwerker > Werkzeuge > Elektrowerkzeuge > Bohrmaschinen
            ("handyhülle", 20349),  // … > Handy-Zubehör > Taschen & Schutzhüllen
            ("kaffeemaschine", 184665), // … > Kaffee-, Tee- & Espressomaschinen > Filter-Kaffeemaschinen
            ("fahrrad", 177831),        // Sport > Radsport > Fahrräder
            ("handy ladekabel", 123422), // … > Handy-Zubehör > Kabel & Adapter
            ("laufschuhe herren", 158952), // … > Fitness- & Laufschuhe > Herren
            ("damen sonnenbrille", 45246), // … > Damen-Accessoires > Sonnenbrillen & Zubehör > Sonnenbrillen
            ("externe festplatte", 131553), // … > Festplatten (HDD, SSD & NAS) > Externe Festplatten
            ("tintenpatronen", 16191),      // … > Tinte, Toner & Papier > Tintenpatronen
            ("herren winterjacke", 57988),  // … > Herren > Herrenmode > Jacken & Mäntel
            ("damen sneaker", 95672),       // … > Damen > Damenschuhe > Sneaker
            ("damen handtasche", 169291),   // Kleidung & Accessoires > Damen > Damentaschen
        ],
    ),
    (
        Site::Us,
        8,
        &[
            ("iphone case", 20349),   // … > Cell Phone Accessories > Cases, Covers & Skins
            ("graphics card", 27386), // … > Graphics/Video Cards
            ("mens watch", 31387),    // … > Watches > Wristwatches
            ("laptop", 177),          // … > Laptops & Netbooks > PC Laptops & Netbooks
            ("smartwatch", 178893),   // Cell Phones & Accessories > Smart Watches
            ("bicycle", 177831),      // Sporting Goods > Cycling > Bicycles
            ("headphones", 112529),   // … > Portable Audio & Headphones > Headphones
            ("womens running shoes", 95672), // … > Women's Shoes > Athletic Shoes
            ("ink cartridge", 16191), // … > Printer Ink, Toner & Paper > Ink Cartridges
            ("vacuum cleaner", 20614), // … > Household Supplies & Cleaning > Vacuum Cleaners
        ],
    ),
    (
        Site::Gb,
        6,
        &[
            ("mobile phone case", 20349), // … > Mobile Phone & PDA Accessories > Cases & Covers
            ("graphics card", 27386),     // … > Graphics/Video Cards
            ("mens watch", 31387),        // Jewellery & Watches > Watches > Wristwatches
            ("laptop", 177),              // … > Laptops & Netbooks > PC Laptops & Netbooks
            ("bike", 33503),              // Sporting Goods > Cycling > Bikes
            ("headphones", 112529),       // Sound & Vision > Headphones
            ("mens trainers", 15709),     // … > Men's Shoes > Trainers
            ("ink cartridges", 16191),    // … > Ink, Toner & Paper > Ink Cartridges
        ],
    ),
    (
        Site::Au,
        6,
        &[
            ("phone case", 20349),     // … > Mobile Accessories > Cases, Covers & Skins
            ("graphics card", 27386),  // … > Graphics/Video Cards
            ("mens watch", 31387),     // … > Watches > Wristwatches
            ("laptop", 177),           // … > Laptops & Netbooks > PC Laptops & Netbooks
            ("smartwatch", 178893),    // Phones & Accessories > Smart Watches
            ("bicycle", 177831),       // Sporting Goods > Cycling > Bicycles
            ("headphones", 112529),    // … > Portable Audio & Headphones > Headphones
            ("vacuum cleaner", 20614), // Home Appliances > Vacuum Cleaners
        ],
    ),
];

/// Sellers' own words find the leaf they mean in the top 5 (per site at least the number
/// [`SELLER_QUERIES`] gives; the hits and misses are printed, `--nocapture`).
#[test]
fn seller_queries_find_their_leaf_in_the_top_5() {
    let mut short = Vec::new();
    for (site, least, queries) in SELLER_QUERIES {
        if !site.is_compiled_in() {
            continue;
        }
        let mut hits = 0;
        for &(query, id) in queries {
            let leaf = LeafCategory::new(site, id)
                .unwrap_or_else(|_| panic!("{site}: {id} is not a leaf (query {query:?})"));
            match rank_of(site, query, leaf) {
                Some(r) if r < 5 => {
                    hits += 1;
                    println!("{site} {query:?}: {id} at {}", r + 1);
                }
                other => println!(
                    "{site} {query:?}: {id} {}; top 3 {:?}",
                    other.map_or("not found".to_string(), |r| format!("at {}", r + 1)),
                    site.search(query)
                        .take(3)
                        .map(|c| c.path().to_string())
                        .collect::<Vec<_>>()
                ),
            }
        }
        println!(
            "{site}: {hits} of {} seller queries in the top 5",
            queries.len()
        );
        if hits < least {
            short.push(format!(
                "{site}: {hits} of {} in the top 5, expected at least {least}",
                queries.len()
            ));
        }
    }
    assert!(short.is_empty(), "seller queries: {short:?}");
}

/// A query that matches nothing gets the words of the site's names nearest to its own, as
/// the names write them; one that matches something gets none.
#[test]
fn a_query_that_matches_nothing_gets_the_nearest_words() {
    assert_eq!(Site::De.search("smartfone").count(), 0);
    let nearest: Vec<&str> = Site::De.nearest_words("smartfone").collect();
    assert!(nearest.contains(&"Smartphones"), "{nearest:?}");
    assert_eq!(Site::Us.search("headphnes").count(), 0);
    let nearest = Site::Us.nearest_words("headphnes");
    assert_eq!(nearest.clone().next(), Some("Headphones"), "{nearest}");
    assert!(nearest.len() <= 5);
    // Words that match something need no suggestion; nothing is near a made-up word.
    assert_eq!(Site::De.nearest_words("grafikkarte").count(), 0);
    assert_eq!(Site::Us.nearest_words("qqqqzzzz").count(), 0);
}

/// The leaves `query` finds first on `site`, as `(name, parent's name)`.
fn top_names(site: Site, query: &str, n: usize) -> Vec<(&'static str, &'static str)> {
    site.search(query)
        .take(n)
        .map(|c| (c.name(), c.category().parent().map_or("", |p| p.name())))
        .collect()
}

/// A query that is, word for word, a leaf's name and its parent's finds the leaves so named
/// before leaves whose own name has the same words under a parent the query does not name
/// ("Zubehör & Ersatzteile" under "Solarien"), or whose path is shorter but whose parent's
/// name has other words ("Bekleidung & Schutzausrüstung") or the word only as a compound's
/// end ("Fahrradbekleidung").
#[test]
fn a_leafs_name_and_its_parents_find_it_before_leaves_that_only_share_their_words() {
    let top = top_names(Site::De, "Ersatzteile Teile & Zubehör", 3);
    assert!(
        top.iter()
            .all(|&named| named == ("Ersatzteile", "Teile & Zubehör")),
        "{top:?}"
    );
    let leaf = |id| LeafCategory::new(Site::De, id).unwrap();
    // Sammeln & Seltenes > Militaria > NATO-Shop > Bekleidung > Westen (was 4th, behind
    // "Westen" under "Bekleidung & Schutzausrüstung" and under "Fahrradbekleidung").
    assert!(rank_of(Site::De, "Westen Bekleidung", leaf(40833)).is_some_and(|r| r < 3));
    // Sport > Weitere Sportarten > Bogenschießen > Zubehör > Werkzeuge (was 4th, behind
    // "Zubehör" under "Druckluftwerkzeuge").
    assert!(rank_of(Site::De, "Werkzeuge Zubehör", leaf(181302)).is_some_and(|r| r < 3));
}

/// A query that is, word for word, a leaf's own name finds the leaves so named before a
/// leaf named with some of its words under a parent named with the others ("Lamps" under
/// "Lighting" for "Lamps & Lighting").
#[test]
fn a_leafs_own_name_finds_it_before_a_leaf_and_parent_that_share_its_words() {
    let top = top_names(Site::Us, "Lamps & Lighting", 3);
    assert!(
        top.iter()
            .all(|&(name, _)| name == "Lamps & Lighting" || name == "Lighting & Lamps"),
        "{top:?}"
    );
}
