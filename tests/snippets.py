"""Small training scripts shared by the CLI-level tests, each with the findings it is known for."""

from __future__ import annotations

# TL101 (error) on line 7: backward without an optimizer step.
MISSING_STEP = """\
import torch
model = torch.nn.Linear(2, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(4, 2), torch.randn(4, 1))]:
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
"""

# TL101 on line 7 and TL301 (warning) on line 8.
MISSING_STEP_AND_ITEM = MISSING_STEP + "    print(loss.item())\n"

# TL204 (warning), whose safe fix also inserts an `import torch` line.
DEPRECATED_SCALER = "from torch.cuda.amp import GradScaler\nscaler = GradScaler()\n"
# The fix also drops the import it leaves unused (its line becomes `import torch`).
FIXED_SCALER = 'import torch\nscaler = torch.amp.GradScaler("cuda")\n'

CLEAN = "import torch\nx = torch.zeros(3)\n"

# The rules these tests rely on; other rules may come and go without breaking them.
SELECT = ("--select", "TL101,TL204,TL301")
