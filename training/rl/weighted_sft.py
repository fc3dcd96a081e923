"""TRL's ``SFTTrainer`` with a loss weight per token (``sft.verdict_weight``).

TRL masks tokens out of the loss but cannot weigh them. Here the rows carry a ``loss_weights`` column beside
``input_ids`` and ``assistant_masks``; the loss is the weighted sum of the trained tokens' negative
log-likelihoods over their count, which is TRL's loss when every weight is 1. Imported only when a weight is
set, so the default path stays TRL's own (with its logged token accuracy and entropy).
"""

from __future__ import annotations

import torch
from torch.nn.functional import cross_entropy
from torch.nn.utils.rnn import pad_sequence
from trl import SFTTrainer


class WeightedSFTTrainer(SFTTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.data_collator = self._with_weights(self.data_collator)

    @staticmethod
    def _with_weights(collate):
        """TRL's collator, with each row's weights padded (with 0, off the mask anyway) to the batch's width."""
        def collate_weighted(examples: list[dict]) -> dict:
            weights = [torch.tensor(example.pop("loss_weights")) for example in examples]
            batch = collate(examples)
            batch["loss_weights"] = pad_sequence(weights, batch_first=True)[:, : batch["labels"].shape[1]]
            return batch
        return collate_weighted

    def _set_signature_columns_if_needed(self):
        super()._set_signature_columns_if_needed()
        self._signature_columns = [*self._signature_columns, "loss_weights"]

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        weights, labels = inputs.pop("loss_weights")[:, 1:], inputs.pop("labels")[:, 1:]
        logits = model(**inputs, use_cache=False).logits[:, :-1].float()
        nll = cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100, reduction="none")
        count = (labels != -100).sum() if num_items_in_batch is None else num_items_in_batch
        loss = (nll * weights.to(nll.dtype)).sum() / torch.as_tensor(count, device=nll.device).clamp(min=1)
        return (loss, None) if return_outputs else loss
