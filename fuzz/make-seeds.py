#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (fuzz/seeds/<target>/) from the repository's data.

- decode_tree: the saved getCategoryTree answers (tests/fixtures/trees/*.json.gz), each cut to
  the first two children of every node (a valid tree of at most a few hundred categories),
  and one in the contract's node shape (categoryId, childCategoryIds on the node itself);
- decode_subtree: a getCategorySubtree answer below a top-level category of each of them;
- snapshot_parse: the committed snapshots (snapshots/*.json) cut the same way, in the
  snapshot format;
- parse_redirect, redact: consent redirects and token-endpoint answers as the service sends
  them, with made-up secrets.

Deterministic: running it again gives the same files. Run from anywhere:
    python3 fuzz/make-seeds.py
"""
import gzip
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SEEDS = ROOT / "fuzz" / "seeds"
BREADTH = 2


def write(target, name, data):
    d = SEEDS / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / name).write_bytes(data)


def prune(node):
    node = dict(node)
    kids = node.get("childCategoryTreeNodes")
    if kids:
        node["childCategoryTreeNodes"] = [prune(k) for k in kids[:BREADTH]]
    return node


def contract_shape(node):
    """The same node with the contract's field names on the node itself."""
    out = {
        "categoryId": node["category"]["categoryId"],
        "categoryName": node["category"]["categoryName"],
        "categoryTreeNodeLevel": node["categoryTreeNodeLevel"],
    }
    kids = node.get("childCategoryTreeNodes") or []
    if kids:
        out["childCategoryIds"] = [k["category"]["categoryId"] for k in kids]
        out["childCategoryTreeNodes"] = [contract_shape(k) for k in kids]
    out["leafCategory"] = bool(node.get("leafCategoryTreeNode"))
    return out


def trees():
    for path in sorted((ROOT / "tests" / "fixtures" / "trees").glob("*.json.gz")):
        answer = json.loads(gzip.decompress(path.read_bytes()))
        answer["rootCategoryNode"] = prune(answer["rootCategoryNode"])
        yield path.name.split(".")[0], answer


def snapshot_text(header, cats):
    """The snapshot format of taxonomy_tree::snapshot::to_string."""
    q = lambda s: json.dumps(s, ensure_ascii=False)
    lines = ["{", '  "format": 1,', f'  "categoryTreeId": {header["categoryTreeId"]},']
    for key in ["marketplaceId", "language", "categoryTreeVersion", "takenAt", "source"]:
        lines.append(f"  {q(key)}: {q(header[key])},")
    lines.append(f'  "note": {q(header["note"]) if header["note"] is not None else "null"},')
    listable = [c for c in cats if c["id"] != 0]
    lines.append(f'  "categoryCount": {len(listable)},')
    lines.append(f'  "leafCount": {sum(c["leaf"] for c in listable)},')
    lines.append('  "categories": [')
    body = []
    for c in cats:
        parent = "null" if c["parent"] is None else str(c["parent"])
        kids = ",".join(str(k) for k in c["children"])
        body.append(
            f'    {{"id":{c["id"]},"name":{q(c["name"])},"parent":{parent},'
            f'"leaf":{str(c["leaf"]).lower()},"children":[{kids}]}}'
        )
    lines.append(",\n".join(body))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    for name, answer in trees():
        write("decode_tree", f"tree-{name}.json", json.dumps(answer, ensure_ascii=False))
        top = answer["rootCategoryNode"]["childCategoryTreeNodes"][0]
        sub = {
            "categoryTreeId": answer["categoryTreeId"],
            "categoryTreeVersion": answer["categoryTreeVersion"],
            "categorySubtreeNode": top,
        }
        write("decode_subtree", f"subtree-{name}.txt",
              top["category"]["categoryId"] + "\n" + json.dumps(sub, ensure_ascii=False))
        if name == "0":
            contract = dict(answer)
            contract["rootCategoryNode"] = contract_shape(answer["rootCategoryNode"])
            write("decode_tree", "tree-0-contract-shape.json",
                  json.dumps(contract, ensure_ascii=False))

    for path in sorted((ROOT / "snapshots").glob("*.json")):
        snap = json.loads(path.read_text())
        by_id = {c["id"]: c for c in snap["categories"]}
        kept, stack = [], [0]
        while stack:
            c = dict(by_id[stack.pop()])
            c["children"] = c["children"][:BREADTH]
            kept.append(c)
            stack.extend(c["children"])
        kept.sort(key=lambda c: c["id"])
        write("snapshot_parse", path.name, snapshot_text(snap, kept))

    redirects = {
        "granted-url.txt": "https://example.com/accepted?state=q7Yb3vXK0c9mZ2pL&code=v%5E1.1%23i%5E1%23p%5E3%23r%5E1%23f%5E0%23I%5E3%23t%5EUl41XzA6&expires_in=299",
        "granted-query.txt": "?state=q7Yb3vXK0c9mZ2pL&code=v%5E1.1%23i%5E1%23p%5E3&expires_in=299",
        "granted-bare.txt": "code=v%5E1.1%23i%5E1&state=s-1",
        "denied.txt": "https://example.com/declined?state=q7Yb3vXK0c9mZ2pL&error=access_denied&error_description=the+user+q7Yb3vXK0c9mZ2pL+said+no",
        "denied-encoded.txt": "state=Q%2FRt%2B9%3D%3D&code=AB%20CD%2FEF&error=server_error&error_description=%7B%22state%22%3A%22Q%5C%2FRt%2B9%3D%3D%22%2C%22code%22%3A%22AB%2BCD%5Cu002fEF%22%7D",
        "runame.txt": "My_Company-MyApp-PRD-abcdefg?code=abc%3D%3D&state=x",
    }
    for name, text in redirects.items():
        write("parse_redirect", name, text)

    # The redact target reads 96 bytes of choices (secrets, encodings, where to plant), then
    # the text.
    bodies = {
        "token-answer.bin": '{"access_token":"v^1.1#i^1#p^3#r^1#I^3#t^H4sIAAAA","expires_in":7200,"refresh_token":"v^1.1#i^1#p^3#r^1#f^0#I^3#t^Ul4xMF8","refresh_token_expires_in":47304000,"token_type":"User Access Token"}',
        "error-answer.bin": '{"error":"invalid_grant","error_description":"the provided authorization grant code is invalid or was issued to another client"}',
        "form-echo.bin": "grant_type=authorization_code&code=v%5E1.1%23i%5E1%23p%5E3&redirect_uri=My_Company-MyApp-PRD-abcdefg",
        "html.bin": "<html><body><h1>502 Bad Gateway</h1>\r\n<p>upstream: https://auth.ebay.com/oauth2/token?x=1</p></body></html>",
    }
    for i, (name, text) in enumerate(bodies.items()):
        head = bytes((i * 37 + k * 11) % 256 for k in range(96))
        write("redact", name, head + text.encode())


if __name__ == "__main__":
    main()
