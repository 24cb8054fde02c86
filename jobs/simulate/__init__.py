"""Fleet simulator: writes captures of Kafka brokers' disks with known problems (``kafka-recon simulate``).

A simulated controller (KRaft or ZooKeeper) applies Kafka's rules, simulated brokers follow it while they are
up and miss what happens while they are down, and a writer lays the result out as a capture (docs/CONTRACTS.md)
with ``expected_findings.json`` as ground truth. Every byte of a Kafka file comes from the ``udfs`` encoders,
through :mod:`jobs.simulate.codec`. Pure Python: no pyspark.
"""
