; ModuleID = '__compute_module_subtract_exponential_fusion_kernel_module'
source_filename = "__compute_module_subtract_exponential_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @subtract_exponential_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
subtract_exponential_fusion_wrapped.exit:
  %1 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %2 = load ptr, ptr %1, align 8, !invariant.load !3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3, !dereferenceable !4
  %4 = getelementptr inbounds nuw i8, ptr %2, i64 16
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !5
  %6 = getelementptr inbounds nuw i8, ptr %2, i64 32
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !5
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !11)
  %8 = load float, ptr %3, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %9 = load float, ptr %5, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %10 = fmul float %9, 2.000000e+00
  %11 = fsub float %10, %8
  %12 = insertelement <1 x float> undef, float %11, i64 0
  %13 = fcmp uge <1 x float> %12, splat (float -8.780000e+01)
  %14 = select <1 x i1> %13, <1 x float> %12, <1 x float> splat (float -8.780000e+01)
  %15 = fcmp ule <1 x float> %14, splat (float 8.880000e+01)
  %16 = select <1 x i1> %15, <1 x float> %14, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i = fmul <1 x float> %16, splat (float f0x3FB8AA3B)
  %exp_f321.i = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i
  %17 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i)
  %18 = fcmp uge <1 x float> %17, splat (float -1.270000e+02)
  %19 = select <1 x i1> %18, <1 x float> %17, <1 x float> splat (float -1.270000e+02)
  %20 = fcmp ule <1 x float> %19, splat (float 1.270000e+02)
  %21 = select <1 x i1> %20, <1 x float> %19, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i = fmul <1 x float> splat (float f0x3F318000), %21
  %22 = fsub <1 x float> %16, %exp_f322.i
  %exp_f323.i = fmul <1 x float> splat (float f0xB95E8083), %21
  %23 = fsub <1 x float> %22, %exp_f323.i
  %exp_f324.i = fmul <1 x float> %23, splat (float f0x39506967)
  %exp_f325.i = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i
  %exp_f326.i = fmul <1 x float> %exp_f325.i, %23
  %exp_f327.i = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i
  %exp_f328.i = fmul <1 x float> %exp_f327.i, %23
  %exp_f329.i = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i
  %exp_f3210.i = fmul <1 x float> %exp_f329.i, %23
  %exp_f3211.i = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i
  %exp_f3212.i = fmul <1 x float> %exp_f3211.i, %23
  %exp_f3213.i = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i
  %exp_f3214.i = fmul <1 x float> %23, %23
  %exp_f3215.i = fmul <1 x float> %exp_f3213.i, %exp_f3214.i
  %exp_f3216.i = fadd <1 x float> %23, %exp_f3215.i
  %exp_f3217.i = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i
  %24 = fptosi <1 x float> %21 to <1 x i32>
  %25 = add <1 x i32> %24, splat (i32 127)
  %26 = shl <1 x i32> %25, splat (i32 23)
  %27 = bitcast <1 x i32> %26 to <1 x float>
  %exp_f3218.i = fmul <1 x float> %exp_f3217.i, %27
  %28 = extractelement <1 x float> %exp_f3218.i, i64 0
  store float %28, ptr %7, align 4, !alias.scope !11, !noalias !15
  %29 = getelementptr inbounds nuw i8, ptr %5, i64 4
  %30 = load float, ptr %29, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %31 = fmul float %30, 2.000000e+00
  %32 = fsub float %31, %8
  %33 = insertelement <1 x float> undef, float %32, i64 0
  %34 = fcmp uge <1 x float> %33, splat (float -8.780000e+01)
  %35 = select <1 x i1> %34, <1 x float> %33, <1 x float> splat (float -8.780000e+01)
  %36 = fcmp ule <1 x float> %35, splat (float 8.880000e+01)
  %37 = select <1 x i1> %36, <1 x float> %35, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i1 = fmul <1 x float> %37, splat (float f0x3FB8AA3B)
  %exp_f321.i2 = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i1
  %38 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i2)
  %39 = fcmp uge <1 x float> %38, splat (float -1.270000e+02)
  %40 = select <1 x i1> %39, <1 x float> %38, <1 x float> splat (float -1.270000e+02)
  %41 = fcmp ule <1 x float> %40, splat (float 1.270000e+02)
  %42 = select <1 x i1> %41, <1 x float> %40, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i3 = fmul <1 x float> splat (float f0x3F318000), %42
  %43 = fsub <1 x float> %37, %exp_f322.i3
  %exp_f323.i4 = fmul <1 x float> splat (float f0xB95E8083), %42
  %44 = fsub <1 x float> %43, %exp_f323.i4
  %exp_f324.i5 = fmul <1 x float> %44, splat (float f0x39506967)
  %exp_f325.i6 = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i5
  %exp_f326.i7 = fmul <1 x float> %exp_f325.i6, %44
  %exp_f327.i8 = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i7
  %exp_f328.i9 = fmul <1 x float> %exp_f327.i8, %44
  %exp_f329.i10 = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i9
  %exp_f3210.i11 = fmul <1 x float> %exp_f329.i10, %44
  %exp_f3211.i12 = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i11
  %exp_f3212.i13 = fmul <1 x float> %exp_f3211.i12, %44
  %exp_f3213.i14 = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i13
  %exp_f3214.i15 = fmul <1 x float> %44, %44
  %exp_f3215.i16 = fmul <1 x float> %exp_f3213.i14, %exp_f3214.i15
  %exp_f3216.i17 = fadd <1 x float> %44, %exp_f3215.i16
  %exp_f3217.i18 = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i17
  %45 = fptosi <1 x float> %42 to <1 x i32>
  %46 = add <1 x i32> %45, splat (i32 127)
  %47 = shl <1 x i32> %46, splat (i32 23)
  %48 = bitcast <1 x i32> %47 to <1 x float>
  %exp_f3218.i19 = fmul <1 x float> %exp_f3217.i18, %48
  %49 = extractelement <1 x float> %exp_f3218.i19, i64 0
  %50 = getelementptr inbounds nuw i8, ptr %7, i64 4
  store float %49, ptr %50, align 4, !alias.scope !11, !noalias !15
  %51 = getelementptr inbounds nuw i8, ptr %5, i64 8
  %52 = load float, ptr %51, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %53 = fmul float %52, 2.000000e+00
  %54 = fsub float %53, %8
  %55 = insertelement <1 x float> undef, float %54, i64 0
  %56 = fcmp uge <1 x float> %55, splat (float -8.780000e+01)
  %57 = select <1 x i1> %56, <1 x float> %55, <1 x float> splat (float -8.780000e+01)
  %58 = fcmp ule <1 x float> %57, splat (float 8.880000e+01)
  %59 = select <1 x i1> %58, <1 x float> %57, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i20 = fmul <1 x float> %59, splat (float f0x3FB8AA3B)
  %exp_f321.i21 = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i20
  %60 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i21)
  %61 = fcmp uge <1 x float> %60, splat (float -1.270000e+02)
  %62 = select <1 x i1> %61, <1 x float> %60, <1 x float> splat (float -1.270000e+02)
  %63 = fcmp ule <1 x float> %62, splat (float 1.270000e+02)
  %64 = select <1 x i1> %63, <1 x float> %62, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i22 = fmul <1 x float> splat (float f0x3F318000), %64
  %65 = fsub <1 x float> %59, %exp_f322.i22
  %exp_f323.i23 = fmul <1 x float> splat (float f0xB95E8083), %64
  %66 = fsub <1 x float> %65, %exp_f323.i23
  %exp_f324.i24 = fmul <1 x float> %66, splat (float f0x39506967)
  %exp_f325.i25 = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i24
  %exp_f326.i26 = fmul <1 x float> %exp_f325.i25, %66
  %exp_f327.i27 = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i26
  %exp_f328.i28 = fmul <1 x float> %exp_f327.i27, %66
  %exp_f329.i29 = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i28
  %exp_f3210.i30 = fmul <1 x float> %exp_f329.i29, %66
  %exp_f3211.i31 = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i30
  %exp_f3212.i32 = fmul <1 x float> %exp_f3211.i31, %66
  %exp_f3213.i33 = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i32
  %exp_f3214.i34 = fmul <1 x float> %66, %66
  %exp_f3215.i35 = fmul <1 x float> %exp_f3213.i33, %exp_f3214.i34
  %exp_f3216.i36 = fadd <1 x float> %66, %exp_f3215.i35
  %exp_f3217.i37 = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i36
  %67 = fptosi <1 x float> %64 to <1 x i32>
  %68 = add <1 x i32> %67, splat (i32 127)
  %69 = shl <1 x i32> %68, splat (i32 23)
  %70 = bitcast <1 x i32> %69 to <1 x float>
  %exp_f3218.i38 = fmul <1 x float> %exp_f3217.i37, %70
  %71 = extractelement <1 x float> %exp_f3218.i38, i64 0
  %72 = getelementptr inbounds nuw i8, ptr %7, i64 8
  store float %71, ptr %72, align 4, !alias.scope !11, !noalias !15
  %73 = getelementptr inbounds nuw i8, ptr %5, i64 12
  %74 = load float, ptr %73, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %75 = fmul float %74, 2.000000e+00
  %76 = fsub float %75, %8
  %77 = insertelement <1 x float> undef, float %76, i64 0
  %78 = fcmp uge <1 x float> %77, splat (float -8.780000e+01)
  %79 = select <1 x i1> %78, <1 x float> %77, <1 x float> splat (float -8.780000e+01)
  %80 = fcmp ule <1 x float> %79, splat (float 8.880000e+01)
  %81 = select <1 x i1> %80, <1 x float> %79, <1 x float> splat (float 8.880000e+01)
  %exp_f32.i39 = fmul <1 x float> %81, splat (float f0x3FB8AA3B)
  %exp_f321.i40 = fadd <1 x float> splat (float 5.000000e-01), %exp_f32.i39
  %82 = call <1 x float> @llvm.floor.v1f32(<1 x float> %exp_f321.i40)
  %83 = fcmp uge <1 x float> %82, splat (float -1.270000e+02)
  %84 = select <1 x i1> %83, <1 x float> %82, <1 x float> splat (float -1.270000e+02)
  %85 = fcmp ule <1 x float> %84, splat (float 1.270000e+02)
  %86 = select <1 x i1> %85, <1 x float> %84, <1 x float> splat (float 1.270000e+02)
  %exp_f322.i41 = fmul <1 x float> splat (float f0x3F318000), %86
  %87 = fsub <1 x float> %81, %exp_f322.i41
  %exp_f323.i42 = fmul <1 x float> splat (float f0xB95E8083), %86
  %88 = fsub <1 x float> %87, %exp_f323.i42
  %exp_f324.i43 = fmul <1 x float> %88, splat (float f0x39506967)
  %exp_f325.i44 = fadd <1 x float> splat (float f0x3AB743CE), %exp_f324.i43
  %exp_f326.i45 = fmul <1 x float> %exp_f325.i44, %88
  %exp_f327.i46 = fadd <1 x float> splat (float f0x3C088908), %exp_f326.i45
  %exp_f328.i47 = fmul <1 x float> %exp_f327.i46, %88
  %exp_f329.i48 = fadd <1 x float> splat (float f0x3D2AA9C1), %exp_f328.i47
  %exp_f3210.i49 = fmul <1 x float> %exp_f329.i48, %88
  %exp_f3211.i50 = fadd <1 x float> splat (float f0x3E2AAAAA), %exp_f3210.i49
  %exp_f3212.i51 = fmul <1 x float> %exp_f3211.i50, %88
  %exp_f3213.i52 = fadd <1 x float> splat (float 5.000000e-01), %exp_f3212.i51
  %exp_f3214.i53 = fmul <1 x float> %88, %88
  %exp_f3215.i54 = fmul <1 x float> %exp_f3213.i52, %exp_f3214.i53
  %exp_f3216.i55 = fadd <1 x float> %88, %exp_f3215.i54
  %exp_f3217.i56 = fadd <1 x float> splat (float 1.000000e+00), %exp_f3216.i55
  %89 = fptosi <1 x float> %86 to <1 x i32>
  %90 = add <1 x i32> %89, splat (i32 127)
  %91 = shl <1 x i32> %90, splat (i32 23)
  %92 = bitcast <1 x i32> %91 to <1 x float>
  %exp_f3218.i57 = fmul <1 x float> %exp_f3217.i56, %92
  %93 = extractelement <1 x float> %exp_f3218.i57, i64 0
  %94 = getelementptr inbounds nuw i8, ptr %7, i64 12
  store float %93, ptr %94, align 4, !alias.scope !11, !noalias !15
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <1 x float> @llvm.floor.v1f32(<1 x float>) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <4 x float> @llvm.floor.v4f32(<4 x float>) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <8 x float> @llvm.floor.v8f32(<8 x float>) #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare <16 x float> @llvm.floor.v16f32(<16 x float>) #2

attributes #0 = { mustprogress nofree norecurse nosync nounwind willreturn memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }
attributes #2 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 3}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 4}
!5 = !{i64 16}
!6 = !{!7}
!7 = distinct !{!7, !8, !"subtract_exponential_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"subtract_exponential_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"subtract_exponential_fusion_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"subtract_exponential_fusion_wrapped: argument 2"}
!13 = !{!10, !12}
!14 = !{!7, !12}
!15 = !{!7, !10}
