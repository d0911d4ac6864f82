"""fit's two data checks as the result reports them: the overlap of the training loader with
each other loader (TLR405), and the distribution of the first training labels (TLR406, TLR407,
TLR408); mixed into `Result` (fit_result.py). The batches are read as the run goes
(`FitPlugin`, with fit_batches.py)."""

from __future__ import annotations

import linecache
import re
from typing import TYPE_CHECKING, Any

import torch

from torchlint.runtime.child.captured import Finding, LoaderInfo
from torchlint.runtime.child.fit_batches import index_view

if TYPE_CHECKING:
    from torchlint.runtime.child.capture import Capture
    from torchlint.runtime.child.fit import FitPlugin

#: a class counts as never seen only when at least this many labels per class were read
MIN_LABELS_PER_CLASS = 20
#: extreme imbalance: one class holds more than this share of at least `MIN_IMBALANCE_LABELS`
IMBALANCE_SHARE = 0.90
MIN_IMBALANCE_LABELS = 50
#: the default `ignore_index` of cross-entropy and NLL: not a label out of range
IGNORE_INDEX = -100
#: examples given in a finding
EXAMPLES = 5


class DataChecks:
    """The data-check parts of `Result`."""

    plugin: FitPlugin
    capture: Capture
    findings: list[Finding]

    def _leakage(self) -> list[dict[str, Any]]:
        """Overlap of the training loader with each loader never trained on: exact through
        Subset/sampler indices when both draw from one dataset object, else by sample hashes
        of their first batches. A loader that draws the training samples themselves is an
        evaluation of the training split on purpose (`role` train_eval, no finding) when it is
        named for training (`train_eval_loader = ...`) or another loader holds a disjoint
        split; otherwise every overlap is a leak."""
        train = self.capture.train_loader
        if train is None:
            return []
        results: list[dict[str, Any]] = []
        infos: list[LoaderInfo] = []
        trained = {id(run.loader) for run in self.plugin._passes if run.trained}
        for info in self.capture.loaders:
            # a loader never trained on is checked even over the training dataset object
            # (`val_loader = DataLoader(train_dataset, ...)`: all of it overlaps)
            if info is train or id(info) in trained:
                continue
            if any(split_key(info) == r["split"] for r in results):
                continue  # the same split (a loader made anew for each evaluation)
            result = self._overlap(train, info)
            result["site"] = info.site.to_json() if info.site else None
            result["split"] = split_key(info)
            result["validation"] = False
            results.append(result)
            infos.append(info)
        disjoint = any(r["overlap"] == 0 and r["val_checked"] for r in results)
        for info, result in zip(infos, results, strict=True):
            full = result["val_checked"] > 0 and result["overlap"] >= result["val_checked"]
            words = set(re.split(r"[^a-z]+", _assigned_name(info)))
            held_out = bool(words & {"val", "valid", "validation", "test", "dev", "holdout"})
            on_purpose = full and not held_out and ("train" in words or disjoint)
            result["role"] = "train_eval" if on_purpose else "other"
            if result["overlap"] and not on_purpose:
                self.findings.append(self._leak_finding(info, result))
        return results

    def _overlap(self, train: LoaderInfo, other: LoaderInfo) -> dict[str, Any]:
        train_view, other_view = index_view(train.loader), index_view(other.loader)
        if train_view is not None and other_view is not None and train_view[0] is other_view[0]:
            base = train_view[0]
            try:
                size = len(base)
            except TypeError:
                size = None
            if size is not None:
                train_set = set(train_view[1]) if train_view[1] is not None else None
                other_idx = other_view[1] if other_view[1] is not None else range(size)
                other_set = set(other_idx)
                if train_set is None:
                    common = sorted(i for i in other_set if 0 <= i < size)
                else:
                    common = sorted(train_set & other_set)
                return {
                    "method": "indices",
                    "overlap": len(common),
                    "train_checked": len(train_set) if train_set is not None else size,
                    "val_checked": len(other_set),
                    "examples": [{"index": i} for i in common[:EXAMPLES]],
                }
        train_hashes = self.plugin._hashes.get(train, {})
        other_hashes = self.plugin._hashes.get(other, {})
        if not train_hashes or not other_hashes:
            return {
                "method": "none",
                "overlap": 0,
                "train_checked": self.plugin._hashed_samples.get(train, 0),
                "val_checked": self.plugin._hashed_samples.get(other, 0),
                "examples": [],
            }
        common_hashes = [h for h in other_hashes if h in train_hashes]
        pairs = sorted((other_hashes[h], train_hashes[h]) for h in common_hashes)
        return {
            "method": "hashes",
            "overlap": len(pairs),
            "train_checked": self.plugin._hashed_samples.get(train, 0),
            "val_checked": self.plugin._hashed_samples.get(other, 0),
            "examples": [{"val_sample": v, "train_sample": t} for v, t in pairs[:EXAMPLES]],
        }

    def _leak_finding(self, info: LoaderInfo, result: dict[str, Any]) -> Finding:
        overlap, checked = result["overlap"], result["val_checked"]
        if result["method"] == "indices":
            shown = ", ".join(str(e["index"]) for e in result["examples"])
            what = (
                f"{overlap} of the {checked} samples this loader draws from its dataset are "
                f"also training samples (dataset indices {shown}"
                f"{', ...' if overlap > len(result['examples']) else ''}; exact, from the "
                "Subset/sampler indices of both loaders)"
            )
        else:
            shown = ", ".join(
                f"#{e['val_sample']} = training #{e['train_sample']}" for e in result["examples"]
            )
            what = (
                f"{overlap} of the {checked} samples of its first batches are byte-for-byte "
                f"copies of samples among the first {result['train_checked']} training ones "
                f"({shown}{', ...' if overlap > len(result['examples']) else ''})"
            )
        return Finding(
            "TLR405",
            f"the loader created here overlaps the training data: {what}. A validation loss "
            "on samples the model trains on measures memory, not generalisation. Split the "
            "data once (torch.utils.data.random_split, or disjoint index ranges) and give "
            "each loader its own part.",
            info.site,
            {k: result[k] for k in ("method", "overlap", "train_checked", "val_checked")}
            | {"examples": result["examples"]},
        )

    def _labels(self) -> dict[str, Any]:
        train = self.capture.train_loader
        batches = self.plugin._labels.get(train, []) if train is not None else []
        classes = self.plugin.num_classes()
        empty: dict[str, Any] = {
            "checked": 0,
            "num_classes": classes,
            "counts": [],
            "missing": [],
            "dominant": None,
            "out_of_range": [],
            "shuffled": None,
        }
        if train is None or not batches:
            return empty
        labels = torch.cat([b.reshape(-1).to("cpu") for b in batches]).long()
        valid = labels[labels != IGNORE_INDEX]
        out_of_range = valid[(valid < 0) | (valid >= classes)] if classes else valid[valid < 0]
        in_range = valid[(valid >= 0) & (valid < classes)] if classes else valid[valid >= 0]
        size = classes if classes else (int(in_range.max()) + 1 if in_range.numel() else 0)
        counts = torch.bincount(in_range, minlength=size).tolist() if size else []
        sampler = getattr(train.loader, "sampler", None)
        shuffled = type(sampler).__name__ != "SequentialSampler" if sampler is not None else None
        result = dict(empty)
        result.update(
            checked=int(labels.numel()),
            counts=counts[:1000],
            out_of_range=sorted(set(out_of_range.tolist()))[:EXAMPLES],
            shuffled=shuffled,
        )
        order = (
            " The loader does not shuffle: a dataset sorted by class looks like this in its "
            "first batches; pass shuffle=True."
            if shuffled is False
            else ""
        )
        total = sum(counts)
        if classes and total >= MIN_LABELS_PER_CLASS * classes:
            missing = [c for c, n in enumerate(counts) if n == 0]
            result["missing"] = missing[:1000]
            if missing:
                shown = ", ".join(map(str, missing[:8])) + (", ..." if len(missing) > 8 else "")
                self.findings.append(
                    Finding(
                        "TLR406",
                        f"{len(missing)} of the {classes} classes the model predicts never "
                        f"appear among the first {total} training labels (class {shown}): "
                        "check the labels (a filter or a mapping that drops classes) and the "
                        f"number of outputs.{order}",
                        train.site,
                        {"missing": missing[:50], "checked": total, "num_classes": classes},
                    )
                )
        if total >= MIN_IMBALANCE_LABELS and counts:
            top = max(range(len(counts)), key=lambda c: counts[c])
            share = counts[top] / total
            if share > IMBALANCE_SHARE:
                result["dominant"] = {"label": top, "share": share}
                self.findings.append(
                    Finding(
                        "TLR407",
                        f"class {top} is {share:.0%} of the first {total} training labels: "
                        "a model can reach a low loss by always predicting it. Check the "
                        "labels; for a truly imbalanced dataset use class weights "
                        f"(CrossEntropyLoss(weight=...)) or a WeightedRandomSampler.{order}",
                        train.site,
                        {"label": top, "share": share, "checked": total},
                    )
                )
        if (
            result["out_of_range"]
            and self.plugin._range_finding is None
            and not any(f.code == "TLR301" for f in self.capture.findings)
        ):
            self.findings.append(
                Finding(
                    "TLR408",
                    f"labels outside 0..{(classes or 1) - 1} in the first batches of the "
                    f"training loader created here (e.g. "
                    f"{', '.join(map(str, result['out_of_range']))}). Fix the labels "
                    "(1-based labels need a `- 1`) or the number of outputs.",
                    train.site,
                    {"num_classes": classes, "examples": result["out_of_range"]},
                )
            )
        return result


def split_key(info: LoaderInfo) -> int:
    """Which split a loader draws: its dataset object (a loader made anew for each evaluation
    over the same dataset is the same split; the parts of a random_split are not)."""
    dataset = getattr(info.loader, "dataset", None)
    return id(dataset) if dataset is not None else id(info)


def _assigned_name(info: LoaderInfo) -> str:
    """The name the loader's creating line assigns it to (`val_loader = DataLoader(...)`),
    lowercased; "" when the line is not an assignment."""
    site = info.site
    if site is None:
        return ""
    line = linecache.getline(site.filename, site.line)
    target, equals, _ = line.partition("=")
    if not equals or "(" in target:
        return ""
    return target.strip().lower()
