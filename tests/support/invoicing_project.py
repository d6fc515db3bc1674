"""A small real project to route prompts against: calc, invoices, a server, a front end.

`write_project(root)` lays it out: Python modules with functions and classes the code
index finds (`div`, `format_money`, `Invoice`, `create_app`, ...), a TypeScript
component, a Makefile, docs, a shell script and a settings file.
"""

from __future__ import annotations

from pathlib import Path

FILES = {
    "calc.py": (
        "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
        "def mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n"
    ),
    "test_calc.py": "from calc import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n",
    "invoices/__init__.py": "",
    "invoices/models.py": (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass LineItem:\n"
        "    price: int\n    quantity: int\n\n\n@dataclass\nclass Invoice:\n"
        "    items: list[LineItem]\n    discount: int = 0\n\n\n"
        "def total_due(invoice: Invoice) -> int:\n"
        "    return sum(i.price * i.quantity for i in invoice.items) - invoice.discount\n"
    ),
    "invoices/render.py": (
        "from calc import div\nfrom invoices.models import Invoice, total_due\n\n\n"
        "def format_money(cents: int) -> str:\n    return f'{div(cents, 100):.2f}'\n\n\n"
        "def render_pdf(invoice: Invoice) -> bytes:\n"
        "    return format_money(total_due(invoice)).encode()\n"
    ),
    "server/app.py": (
        "from invoices.render import render_pdf\n\n\ndef create_app():\n"
        "    return {'/invoice': get_invoice}\n\n\ndef get_invoice(number):\n"
        "    return render_pdf(load_invoice(number))\n\n\ndef load_invoice(number):\n"
        "    raise NotImplementedError\n"
    ),
    "frontend/src/Cart.tsx": (
        "export function useCart() {\n  return [];\n}\n\n"
        "export function Cart() {\n  const items = useCart();\n  return items.length;\n}\n"
    ),
    "config/settings.toml": "[server]\nport = 8080\n",
    "scripts/deploy.sh": "#!/bin/sh\nrsync -a . server:/srv/invoicing\n",
    "docs/usage.md": "# Usage\n\nRun `make serve`.\n",
    "README.md": "# invoicing\n\nInvoices as PDF.\n",
    "Makefile": "check:\n\tpython3 -m pytest -q\n",
}


def write_project(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root
