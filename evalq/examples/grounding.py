"""A small groundedness dataset that evalq can score offline: the FACTS Grounding examples the
seed notebook uses, so a judge that reads the context passes a grounded response and fails an
invented or contradicting one."""

from __future__ import annotations

from pathlib import Path

from evalq.examples.datasets import write_rows

DATASET_FILE = "groundedness.jsonl"

RETAIL_QUERY = "What advantages do offline vs online retailers have?"
RETAIL_CONTEXT = """Due to savings in inventory costs, online retailing has a big advantage in selling
less popular items (the long tail) and in removing geographic barriers to purchase. Brynjolfsson
et al. (2003) estimated that the significantly increased assortment of books available online
increased consumer welfare by $700 million to a billion dollars in 2000. In comparing the online
sales of a clothing retailer with the catalog sales of the same item, Brynjolfsson et al. (2009)
showed that online sales of niche items were less sensitive to competition from offline stores
than from catalog sales because the online sales were skewed toward niche items. Brynjolfsson et
al. (2011) showed that online sales of niche items increased with recommendations and search tools,
indicating that these tools lowered search costs, making it easier for consumers to locate them.
In sum, because of the ability to handle more extensive inventories and provide search tools that
facilitate locating niche items, online retailing has a comparative advantage in selling less popular
items, translating into substantial benefits for consumers.
As noted above, online sellers have an advantage in facilitating a search for information on digital
attributes (including price). In contrast, offline sellers have an advantage in providing information
on non- digital attributes and providing faster delivery. This leads to the possibility that consumers
will search among both online and offline retailers."""

OPM_QUERY = "What are the requirements of OPM?"
OPM_CONTEXT = """As part of the assessment, S. 4043 would require OPM to explain whether each agency met its telework
goals and, if not, the actions being taken to identify and eliminate barriers to meeting them. The annual
report would also discuss additional steps that are planned by agencies to ensure telework oversight and
quality control and increase the utilization rates of office building space owned or leased by the agencies.
S. 4043 also requires the Office of Management and Budget (OMB), in consultation with GSA and the
Federal Real Property Council, to develop benchmarks and guidance for executive agencies to use when
calculating building utilization rates. S. 4043 would then require each executive agency head to establish
(1) a system to track office building space utilization rates consistent with that OMB guidance and (2)
indicators that measure the effects of telework policy on the management of real and personal property,
among other things.
S. 4043 would also require OPM to establish data standards to aid telework reporting requirements and
for automated telework tracking within payroll systems used by agencies. S. 4043 would require OPM, in
turn, to create an online tool that makes the standardized and reported data publicly available and would
allow OPM to use the online tool to fulfill its annual reporting requirements. For a more detailed
discussion of the bill's provisions on telework data standards, including office building utilization data,
see CRS Insight IN12352, Establishing Data Standards and Measuring Building Use: Select Provisions
of the Telework Transparency Act of 2024 (S. 4043)."""

MEMORY_QUERY = (
    "How does virtual memory improve the efficiency of real physical memory (RAM) usage in "
    "computer systems?"
)

MEMORY_CONTEXT = """Virtual memory is a computer system technique which gives an application program
the impression that it has contiguous working memory (an address space), while in fact it may be
physically fragmented and may even overflow on to disk storage. Systems that use this technique
make programming of large applications easier and use real physical memory (e.g.RAM) more
efficiently than those without virtual memory.
http://en.wikipedia.org/wiki/Virtual_memory
Page Fault: A page is a fixed-length block of memory that is used as a unit of transfer
between physical memory and external storage like a disk, and a page fault is an interrupt (or
exception) to the software raised by the hardware, when a program accesses a page that is
mapped in address space, but not loaded in physical memory.
http://en.wikipedia.org/wiki/Page_fault
Thrash is the term used to describe a degenerate situation on a computer where increasing
resources are used to do a decreasing amount of work. In this situation the system is
said to be thrashing. Usually it refers to two or more processes accessing a shared resource
repeatedly such that serious system performance degradation occurs because the system is
spending a disproportionate amount of time just accessing the shared resource. Resource
access time may generally be considered as wasted, since it does not contribute to the
advancement of any process. In modern computers, thrashing may occur in the paging system
(if there is not 'sufficient' physical memory or the disk access time is overly long), or in the
communications system (especially in conflicts over internal bus access), etc.
http://en.wikipedia.org/wiki/Thrash_(computer_science)"""

ETHANOL_QUERY = (
    "List the reasons that resulted in decreased emission of greenhouse gases from ethanol "
    "production."
)
ETHANOL_CONTEXT = """A new USDA report, titled 'A Life-Cycle Analysis of the Greenhouse Gas Emissions of Corn-Based
Ethanol,' finds that greenhouse gas emissions associated with producing corn-based ethanol in
the United States are about 43 percent lower than gasoline when measured on an energy equivalent
basis. Unlike other studies of greenhouse gas benefits, which relied on forecasts of future ethanol production
systems and expected impacts on the farm sector, this study reviewed how the industry and farm
sectors have performed over the past decade to assess the current greenhouse gas profile of corn-based ethanol.
The report shows that the reductions in greenhouse gas emissions were driven by a variety of improvements in
ethanol production, spanning from the corn field to the ethanol refinery. Farmers are producing corn
more efficiently and using conservation practices that reduce greenhouse gas emissions, including reduced tillage,
cover crops, and improved nitrogen management. Both corn yields and the efficiency of ethanol
production technologies are also improving.
Previous estimates of ethanol's greenhouse gas balance report lower efficiencies, largely due to anticipated
conversion of grasslands and forests to commodity production as a result of increased demand for corn
used in ethanol production. However, recent studies of international agricultural land use trends show
that since 2004, the primary land use change response of the world's farmers to rising commodity prices
has been to use available land resources more efficiently rather than to expand the amount of land used
for farming."""

# Rows whose response is given: the expected verdict is in the id.
GIVEN_RESPONSES: tuple[tuple[str, str, str, str], ...] = (
    (
        "retail-grounded",
        RETAIL_QUERY,
        RETAIL_CONTEXT,
        "Online retailing has a big advantage in selling less popular items and in removing "
        "geographic barriers to purchase. Offline sellers have an advantage in providing "
        "information on non-digital attributes and providing faster delivery. "
        "I hope this helps!",
    ),
    (
        "ethanol-unsupported",
        ETHANOL_QUERY,
        ETHANOL_CONTEXT,
        "Farmers are producing corn more efficiently and using conservation practices that "
        "reduce greenhouse gas emissions, including reduced tillage, cover crops, and improved "
        "nitrogen management. Ethanol plants also switched to solar power for distillation, "
        "which cut their emissions in half.",
    ),
    (
        "ethanol-contradictory",
        ETHANOL_QUERY,
        ETHANOL_CONTEXT,
        "Greenhouse gas emissions associated with producing corn-based ethanol in the United "
        "States are about 60 percent lower than gasoline when measured on an energy equivalent "
        "basis.",
    ),
)

# Rows the model under test answers.
TO_GENERATE: tuple[tuple[str, str, str], ...] = (
    ("retail", RETAIL_QUERY, RETAIL_CONTEXT),
    ("opm", OPM_QUERY, OPM_CONTEXT),
    ("virtual-memory", MEMORY_QUERY, MEMORY_CONTEXT),
    ("ethanol", ETHANOL_QUERY, ETHANOL_CONTEXT),
)


def groundedness_rows() -> list[dict[str, str]]:
    """Each query/context pair once without a response (the model under test writes one), and
    three rows with a response of their own: one fully grounded ending with a polite closing
    (which must not lower its score), one with a claim the context never makes, and one whose
    figure contradicts the context."""
    rows = [{"id": i, "query": q, "context": c} for i, q, c in TO_GENERATE]
    rows += [{"id": i, "query": q, "context": c, "response": r} for i, q, c, r in GIVEN_RESPONSES]
    return rows


def write_groundedness_example(dest: Path) -> Path:
    """Write the example dataset into the folder ``dest``; returns the JSONL file's path."""
    return write_rows(dest / DATASET_FILE, groundedness_rows(), ensure_ascii=False)
