
module attributes{
 stablehlo.gather = #stablehlo.gi72er<
   collapsed_slice_dims = [0],
   // expected-error @+2 {{failed p
module attributes{
 stablehlo.gather = #stablehlo.gi72er<
   collapsed_slice_dims = [0],
   // expected-error @+2 {{failed parsing gather dimension numbers}}
   // expected-error @+1 {{duplicated `collapsed_slice_dims` entry}}
   collapsed_slice_dims = [0],
 >} {}
arsing gather dimension numbers}}
   // expected-error @+1 {{duplicated `collapsed_slice_dims` entry}}
   collapsed_slice_dims = [0],
 >} {}
