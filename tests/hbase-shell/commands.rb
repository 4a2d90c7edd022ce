status
status 'summary'
status 'detailed'
version
whoami
list
create 't1', {NAME => 'cf', VERSIONS => 3}, {NAME => 'cf2'}, SPLITS => ['g', 'p']
create 't2', 'cf', {NUMREGIONS => 3, SPLITALGO => 'HexStringSplit'}
list
exists 't1'
exists 'nope'
is_enabled 't1'
describe 't1'
describe 'hbase:meta'
alter 't1', NAME => 'cf3'
alter 't1', NAME => 'cf2', VERSIONS => 5
alter 't1', 'delete' => 'cf3'
describe 't1'
put 't1', 'a1', 'cf:q', 'v1', 1000
put 't1', 'a1', 'cf:q', 'v2', 2000
put 't1', 'a1', 'cf:q', 'v3', 3000
put 't1', 'a1', 'cf:r', 'r1', 1000
put 't1', 'a2', 'cf:q', 'x', 1000
put 't1', 'h1', 'cf:q', 'hello', 1000
put 't1', 'q1', 'cf2:z', 'zed', 1000
get 't1', 'a1'
get 't1', 'a1', 'cf:q'
get 't1', 'a1', {COLUMN => 'cf:q', VERSIONS => 3}
get 't1', 'a1', {COLUMN => 'cf:q', TIMERANGE => [1000, 2500], VERSIONS => 3}
get 't1', 'a1', {COLUMN => 'cf:q', TIMESTAMP => 2000}
get 't1', 'nope'
scan 't1'
scan 't1', {FILTER => "PrefixFilter('a')"}
scan 't1', {FILTER => "ValueFilter(=, 'binary:hello')"}
scan 't1', {LIMIT => 2}
scan 't1', {STARTROW => 'a2', STOPROW => 'q1'}
scan 't1', {COLUMNS => ['cf:q'], VERSIONS => 2}
scan 't1', {REVERSED => true, LIMIT => 2}
scan 't1', {ROWPREFIXFILTER => 'a'}
scan 't1', {TIMERANGE => [1500, 2500]}
scan 't1', {FILTER => "SingleColumnValueFilter('cf', 'q', =, 'binary:x')"}
scan 't1', {FILTER => "KeyOnlyFilter() AND FirstKeyOnlyFilter()"}
get 't1', 'h1', {FILTER => "ValueFilter(=, 'regexstring:hel.*')"}
count 't1'
count 't1', INTERVAL => 2, CACHE => 1
delete 't1', 'a1', 'cf:q', 3000
scan 't1', {RAW => true, VERSIONS => 5, STARTROW => 'a1', STOPROW => 'a2'}
get 't1', 'a1', {COLUMN => 'cf:q', VERSIONS => 3}
deleteall 't1', 'a2'
get 't1', 'a2'
deleteall 't1', 'a1', 'cf:r'
get 't1', 'a1'
incr 't1', 'c1', 'cf:n', 5
incr 't1', 'c1', 'cf:n'
get_counter 't1', 'c1', 'cf:n'
append 't1', 'h1', 'cf:q', '!'
get 't1', 'h1', 'cf:q'
flush 't1'
major_compact 't1'
compaction_state 't1'
compact 't1'
scan 't1'
snapshot 't1', 's1'
list_snapshots
list_table_snapshots 't1'
clone_snapshot 's1', 't1c'
scan 't1c'
put 't1', 'z9', 'cf:q', 'later', 1000
disable 't1'
restore_snapshot 's1'
enable 't1'
get 't1', 'z9'
delete_snapshot 's1'
list_snapshots
truncate 't2'
count 't2'
truncate_preserve 't1c'
count 't1c'
disable 't1c'
is_enabled 't1c'
is_disabled 't1c'
drop 't1c'
exists 't1c'
create_namespace 'ns1'
create_namespace 'ns2', {'PROPERTY_NAME' => 'PROPERTY_VALUE'}
describe_namespace 'ns2'
list_namespace
create 'ns1:t2', 'cf'
put 'ns1:t2', 'r1', 'cf:a', 'v', 1000
get 'ns1:t2', 'r1'
list_namespace_tables 'ns1'
alter_namespace 'ns2', {METHOD => 'set', 'PROPERTY_NAME' => 'NEW'}
describe_namespace 'ns2'
alter_namespace 'ns2', {METHOD => 'unset', NAME => 'PROPERTY_NAME'}
describe_namespace 'ns2'
drop_namespace 'ns1'
create 'nsX:t', 'cf'
disable 'ns1:t2'
drop 'ns1:t2'
drop_namespace 'ns1'
drop_namespace 'ns2'
list_namespace
grant 'bob', 'RW', 't1'
revoke 'bob', 't1'
user_permission 't1'
list_security_capabilities
balance_switch false
balance_switch true
balancer
balancer_enabled
normalizer_enabled
normalizer_switch false
normalizer_switch true
loc = @hbase.instance_variable_get(:@connection).getRegionLocator(org.apache.hadoop.hbase.TableName.valueOf('t1')).getRegionLocation('h'.to_java_bytes); nil
move loc.getRegion.getEncodedName
move loc.getRegion.getEncodedName, loc.getServerName.toString
move 'ffffffffffffffffffffffffffffffff'
list_regions 't1'
locate_region 't1', 'h'
get_splits 't1'
split 't1', 'm'
disable 't1'
drop 't1'
disable 't2'
drop 't2'
list
