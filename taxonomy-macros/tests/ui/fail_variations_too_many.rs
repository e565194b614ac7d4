// More than eBay's limits: 6 axes (at most 5), 61 values of one axis (at most 60).
use taxonomy_macros::variations;

fn main() {
    let _ = variations!("27386", {
        "Memory Size": ["1 GB", "2 GB", "3 GB", "4 GB", "5 GB", "6 GB", "7 GB", "8 GB", "9 GB", "10 GB", "11 GB", "12 GB", "13 GB", "14 GB", "15 GB", "16 GB", "17 GB", "18 GB", "19 GB", "20 GB", "21 GB", "22 GB", "23 GB", "24 GB", "25 GB", "26 GB", "27 GB", "28 GB", "29 GB", "30 GB", "31 GB", "32 GB", "33 GB", "34 GB", "35 GB", "36 GB", "37 GB", "38 GB", "39 GB", "40 GB", "41 GB", "42 GB", "43 GB", "44 GB", "45 GB", "46 GB", "47 GB", "48 GB", "49 GB", "50 GB", "51 GB", "52 GB", "53 GB", "54 GB", "55 GB", "56 GB", "57 GB", "58 GB", "59 GB", "60 GB", "61 GB"],
        "Chipset/GPU Model": ["A"],
        "Compatible Slot": ["B"],
        "Connectors": ["C"],
        "MPN": ["D"],
        "Power Cable Requirement": ["E"],
    });
}
